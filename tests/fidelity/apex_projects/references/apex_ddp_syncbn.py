"""apex_ddp_syncbn written by hand for CPU processes: torch DDP on gloo, BatchNorm kept as it is
(the cpu target's SyncBatchNorm rule: DDP refuses SyncBatchNorm on the CPU, each process
normalizes over its own batch), torch.amp with autocast in bfloat16 where the CPU computes it
natively. Under `torchrun --standalone --nproc_per_node 2`, as the project."""
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
parser.add_argument('--lr', '--learning-rate', default=0.3, type=float)
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--weight-decay', '--wd', default=1e-4, type=float)
parser.add_argument('--sync_bn', action='store_true')  # (BatchNorm stays local on the CPU)


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def main():
    args = parser.parse_args()
    local_rank = int(os.environ.get('LOCAL_RANK', 0))
    distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    world_size = 1
    if distributed:
        dist.init_process_group(backend='gloo', init_method='env://')
        world_size = dist.get_world_size()

    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler("cpu")
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    criterion = nn.CrossEntropyLoss()

    generator = torch.Generator().manual_seed(0)
    images = torch.randn(64, 3, 8, 8, generator=generator)
    labels = images[:, :, :4, :4].mean(dim=(2, 3)).argmax(dim=1)  # the brightest channel of a corner
    dataset = torch.utils.data.TensorDataset(images, labels)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=(sampler is None),
                                         sampler=sampler)

    for epoch in range(args.epochs):
        if distributed:
            sampler.set_epoch(epoch)
        model.train()
        for i, (input, target) in enumerate(loader):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
                output = model(input)
                loss = criterion(output, target)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            reduced_loss = loss.detach().clone()
            if distributed:
                dist.all_reduce(reduced_loss, op=dist.ReduceOp.SUM)
                reduced_loss /= world_size
            if local_rank == 0:
                print(f'Epoch: [{epoch}][{i}/{len(loader)}] Loss {reduced_loss.item():.6f}')

    if local_rank == 0:
        print(f'FINAL reference=apex_ddp_syncbn autocast={CPU_BF16} world_size={world_size} '
              f'loss={reduced_loss.item():.6f}')
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del model
    gc.collect()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
