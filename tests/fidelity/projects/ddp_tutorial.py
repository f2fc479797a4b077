"""pytorch/examples' DDP tutorial (distributed/ddp/example.py), as its README runs it: each local rank
takes its share of the GPUs (`torch.cuda.device_count() // local_world_size`), moves the model to
the first of them with `.cuda(device_ids[0])`, passes the list to DDP by position and sends the
labels `.to(device_ids[0])`.

Launch: torchrun --standalone --nproc_per_node 2 ddp_tutorial.py --local_world_size 2
It cannot run unmodified on a CPU-only machine (no GPU to share out, NCCL).
"""
import argparse
import gc
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim

from torch.nn.parallel import DistributedDataParallel as DDP


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(local_world_size, local_rank):
    # local_world_size = 2 on 8 GPUs: rank 0 drives GPUs 0-3, rank 1 GPUs 4-7
    n = torch.cuda.device_count() // local_world_size
    device_ids = list(range(local_rank * n, (local_rank + 1) * n))
    print(f"[{os.getpid()}] rank = {dist.get_rank()}, world_size = {dist.get_world_size()}, "
          f"n = {n}, device_ids = {device_ids}")

    torch.manual_seed(0)
    model = ToyModel().cuda(device_ids[0])
    ddp_model = DDP(model, device_ids)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(device_ids[0])
    loss_fn(outputs, labels).backward()
    optimizer.step()
    return ddp_model


def spmd_main(local_world_size, local_rank):
    env = {key: os.environ[key] for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")}
    print(f"[{os.getpid()}] initializing the process group with {env}")
    dist.init_process_group(backend="nccl")
    ddp_model = demo_basic(local_world_size, local_rank)
    # every rank stepped, and the ranks hold the same weights
    weight = ddp_model.module.net2.weight.detach().clone()
    gathered = [torch.zeros_like(weight) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, weight)
    assert all(torch.equal(w, gathered[0]) for w in gathered)
    del ddp_model  # free DDP before the group goes (a gloo reducer dying at exit can abort)
    gc.collect()
    dist.barrier()
    if dist.get_rank() == 0:
        print(f"FINAL project=ddp_tutorial world_size={dist.get_world_size()} local_world_size={local_world_size}",
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    # torch.distributed.launch passes it; torchrun sets LOCAL_RANK instead
    parser.add_argument("--local_rank", "--local-rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--local_world_size", type=int, default=1)
    args = parser.parse_args()
    spmd_main(args.local_world_size, args.local_rank)
