"""A detection trainer's launcher check and pytorch/examples' DDP tutorial (distributed/ddp/example.py)
split of the GPUs among the local ranks: both read `torch.cuda.device_count()` as what the launcher
started, one GPU (or more) per process. (The tutorial's labels go `.to(device_ids[0])` and its DDP
takes `device_ids` by position; written here as `.cuda(...)` and `device_ids=`, which the rewrite
already moves on every target.)

Launch: torchrun --standalone --nproc_per_node 2 device_count_ranks.py
It cannot run unmodified on a CPU-only machine (no GPU to count, NCCL).
"""
import gc
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def check_devices(local_rank):
    # (as detection trainers check the launch before they start)
    assert torch.cuda.device_count() > local_rank, f"rank {local_rank} has no GPU"
    torch.cuda.set_device(local_rank)


def demo_basic(local_world_size, local_rank):
    # each local rank gets its own share of the GPUs
    n = torch.cuda.device_count() // local_world_size
    device_ids = list(range(local_rank * n, (local_rank + 1) * n))
    print(f"[{os.getpid()}] rank = {dist.get_rank()}, world_size = {dist.get_world_size()}, n = {n}, "
          f"device_ids = {device_ids}")
    torch.manual_seed(0)
    model = nn.Linear(10, 5).cuda(device_ids[0])
    ddp_model = DDP(model, device_ids=device_ids)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).cuda(device_ids[0])
    nn.MSELoss()(outputs, labels).backward()
    optimizer.step()
    return ddp_model


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
    check_devices(local_rank)
    dist.init_process_group(backend="nccl")
    ddp_model = demo_basic(local_world_size, local_rank)
    # every rank took part and ends with the same weights
    ranks = torch.tensor([1.0], device=f"cuda:{local_rank}")
    dist.all_reduce(ranks)
    weight = ddp_model.module.weight.detach().clone()
    gathered = [torch.zeros_like(weight) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, weight)
    assert ranks.item() == dist.get_world_size() and all(torch.equal(w, gathered[0]) for w in gathered)
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del ddp_model
    gc.collect()
    dist.barrier()
    if dist.get_rank() == 0:
        print(f"FINAL project=device_count_ranks world_size={dist.get_world_size()} ranks={int(ranks.item())}",
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
