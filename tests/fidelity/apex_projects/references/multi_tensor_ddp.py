"""multi_tensor_ddp written by hand for CPU processes: torch DDP on gloo, torch.amp with autocast
in bfloat16 where the CPU computes it natively, the gradient norm of the unscaled gradients by
torch's own norm. Under `torchrun --standalone --nproc_per_node 2`, as the project."""
import argparse
import gc
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)

parser = argparse.ArgumentParser()
parser.add_argument('--epochs', default=2, type=int)
parser.add_argument('-b', '--batch-size', default=8, type=int)
parser.add_argument('--lr', default=0.2, type=float)


def main():
    args = parser.parse_args()
    local_rank = int(os.environ.get('LOCAL_RANK', 0))
    distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    world_size = 1
    if distributed:
        dist.init_process_group(backend='gloo', init_method='env://')
        world_size = dist.get_world_size()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu")
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    criterion = nn.CrossEntropyLoss()

    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(96, 12, generator=generator)
    labels = inputs[:, :3].argmax(dim=1)
    dataset = torch.utils.data.TensorDataset(inputs, labels)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=(sampler is None),
                                         sampler=sampler)

    for epoch in range(args.epochs):
        if distributed:
            sampler.set_epoch(epoch)
        for i, (input, target) in enumerate(loader):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
                loss = criterion(model(input), target)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            norm = torch.linalg.vector_norm(torch.cat([p.grad.float().flatten() for p in model.parameters()])).item()
            scaler.step(optimizer)
            scaler.update()
            reduced = loss.detach().clone()
            if distributed:
                dist.all_reduce(reduced)
                reduced /= world_size
            if local_rank == 0 and i % 4 == 0:
                print(f'Epoch: [{epoch}][{i}/{len(loader)}] Loss {reduced.item():.6f} grad norm {norm:.6f}')

    if local_rank == 0:
        print(f'FINAL reference=multi_tensor_ddp autocast={CPU_BF16} world_size={world_size} '
              f'loss={reduced.item():.6f} loss_grad_norm={norm:.6f}')
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del model
    gc.collect()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
