"""train_npu.py written for the CPU by hand: the same model, data and schedule in plain torch."""

import gc
import os

import torch
import torch.distributed as dist

STEPS, BATCH, WIDTH = 6, 32, 16


class RMSNormMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.Parameter(torch.ones(WIDTH))
        self.fc1 = torch.nn.Linear(WIDTH, 2 * WIDTH)
        self.fc2 = torch.nn.Linear(2 * WIDTH, 4)

    def forward(self, x):
        x = torch.nn.functional.rms_norm(x, (WIDTH,), self.norm, eps=1e-6)
        x = torch.relu(torch.nn.functional.linear(x, self.fc1.weight, self.fc1.bias))
        return self.fc2(x)


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    if world > 1:
        dist.init_process_group(backend="gloo", world_size=world, rank=int(os.environ["RANK"]))
    torch.manual_seed(0)
    model = RMSNormMLP()
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    generator = torch.Generator().manual_seed(1)
    data, labels = torch.randn(BATCH, WIDTH, generator=generator), torch.randint(0, 4, (BATCH,), generator=generator)
    rows = slice(local_rank * BATCH // world, (local_rank + 1) * BATCH // world)
    for step in range(STEPS):
        x, y = data[rows], labels[rows]
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if world > 1:
            dist.all_reduce(loss := loss.detach().clone())
            loss /= world
        if local_rank == 0:
            print(f"step {step} loss {loss.item():.8f}")
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del model
    gc.collect()
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
