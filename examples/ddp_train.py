"""Data-parallel training with DistributedDataParallel over NCCL.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node 2 examples/ddp_train.py --epochs 2

Shows the standard multi-GPU skeleton: init_process_group(backend="nccl"),
LOCAL_RANK from the environment, torch.cuda.set_device(local_rank), a
per-rank device string f"cuda:{local_rank}", DDP with device_ids and
output_device, a DistributedSampler, an all_reduce of the loss across ranks and
destroy_process_group at the end. Only rank 0 prints.
"""
import argparse
import gc
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_model():
    return nn.Sequential(
        nn.Linear(20, 64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.ReLU(),
        nn.Linear(64, 1),
    )


def make_dataset(n=1024, seed=0):
    # Every rank builds the same dataset; the sampler hands each rank its shard.
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=g)
    w = torch.randn(20, 1, generator=g) / 20 ** 0.5
    y = torch.sin(x @ w) + 0.05 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=16, help="max steps per epoch")
    parser.add_argument("--batch-size", type=int, default=32, help="per-GPU batch size")
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")

    torch.manual_seed(0)  # same initial weights on every rank
    model = build_model().to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    if rank == 0:
        print(f"world size {world_size}, {len(loader)} batches per rank per epoch")

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        epoch_loss = torch.zeros(2, device=device)  # (sum of losses, number of samples)
        for step, (x, y) in enumerate(loader):
            if step >= args.steps:
                break
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += torch.stack([loss.detach() * x.size(0),
                                       torch.tensor(float(x.size(0)), device=device)])

        # Sum the per-rank totals so every rank sees the global mean loss.
        dist.all_reduce(epoch_loss, op=dist.ReduceOp.SUM)
        mean_loss = (epoch_loss[0] / epoch_loss[1]).item()
        if rank == 0:
            print(f"epoch {epoch}: mean loss across {world_size} ranks {mean_loss:.4f}")

    # Free DDP (its reducer holds the process group, and DDP sits in reference cycles that only
    # the collector breaks) before tearing the group down: with gloo, a reducer left to die at
    # interpreter exit aborts the process ("terminate called without an active exception").
    del model, optimizer
    gc.collect()
    dist.barrier()
    if rank == 0:
        print(f"FINAL example=ddp_train loss={mean_loss:.4f} world_size={world_size}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
