"""A small training script written for the Ascend NPU in ModelZoo's style (torch_npu, set_device,
.npu(), NpuFusedSGD, torch.npu.amp, hccl under torchrun, torch_npu kernels). Prints each step's
loss on rank 0. train_cpu.py is the same model written for the CPU by hand."""

import gc
import os

import torch
import torch_npu
import torch.distributed as dist
from torch_npu.optim import NpuFusedSGD

torch.npu.set_compile_mode(jit_compile=False)
torch.npu.config.allow_internal_format = False

STEPS, BATCH, WIDTH = 6, 32, 16


class RMSNormMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.Parameter(torch.ones(WIDTH))
        self.fc1 = torch.nn.Linear(WIDTH, 2 * WIDTH)
        self.fc2 = torch.nn.Linear(2 * WIDTH, 4)

    def forward(self, x):
        x = torch_npu.npu_format_cast(x, 2)
        x = torch_npu.npu_rms_norm(x, self.norm, epsilon=1e-6)[0]
        x = torch.relu(torch_npu.npu_linear(x, self.fc1.weight, self.fc1.bias))
        return self.fc2(x)


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    loc = f"npu:{local_rank}"
    torch.npu.set_device(loc)
    if world > 1:
        dist.init_process_group(backend="hccl", world_size=world, rank=int(os.environ["RANK"]))
    torch.manual_seed(0)
    model = RMSNormMLP().npu()
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], broadcast_buffers=False)
    optimizer = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = torch.npu.amp.GradScaler()
    generator = torch.Generator().manual_seed(1)
    data, labels = torch.randn(BATCH, WIDTH, generator=generator), torch.randint(0, 4, (BATCH,), generator=generator)
    rows = slice(local_rank * BATCH // world, (local_rank + 1) * BATCH // world)
    for step in range(STEPS):
        x, y = data[rows].to(loc, non_blocking=True), labels[rows].npu()
        optimizer.zero_grad()
        with torch.npu.amp.autocast():
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        torch.npu.synchronize()
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
