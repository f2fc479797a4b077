"""SyncBatchNorm + DDP under mp.spawn, one process per GPU (torch.cuda.device_count()).

Run as plain python: python syncbn_spawn.py. It cannot run unmodified on a CPU-only machine
(no GPU: no process would train, and main fails saying so).
"""
import argparse
import gc
import math
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))

    def forward(self, x):
        return self.head(self.features(x))


def find_free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(rank, world_size, steps, results):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    torch.manual_seed(rank)

    model = ConvNet()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda(rank)
    ddp_model = DDP(model, device_ids=[rank])
    criterion = nn.CrossEntropyLoss().cuda(rank)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)

    for step in range(steps):
        images = torch.randn(4, 3, 6, 6).cuda(rank, non_blocking=True)
        labels = torch.randint(0, 2, (4,)).cuda(rank, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(ddp_model(images), labels)
        loss.backward()
        optimizer.step()

    assert math.isfinite(loss.item())
    del ddp_model, optimizer  # free DDP before the group goes (a gloo reducer dying at exit can abort)
    gc.collect()
    dist.barrier()
    if rank == 0:
        results.put((world_size, loss.item()))
        print(f"FINAL project=syncbn_spawn world_size={world_size} steps={steps} loss={loss.item():.4f}", flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    world_size = torch.cuda.device_count()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(find_free_port())
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(train, args=(world_size, args.steps, results), nprocs=world_size, join=True)
    assert not results.empty(), f"no process trained: found {world_size} GPUs"
    trained_world_size, loss = results.get()
    assert trained_world_size == world_size and math.isfinite(loss)


if __name__ == "__main__":
    main()
