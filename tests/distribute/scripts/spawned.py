"""A trainer that starts its processes with mp.spawn, one per GPU, the DDP tutorial's way."""
import gc
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def worker(rank, world_size, steps):
    setup(rank, world_size)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 2).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(8, 4).cuda(rank)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"rank {rank} of {world_size} done")
    del model, optimizer  # free DDP before the group goes (a gloo reducer dying after it can abort)
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, 3), nprocs=world_size, join=True)
