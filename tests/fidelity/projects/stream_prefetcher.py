"""NVIDIA apex imagenet example style: a data_prefetcher that copies the next batch on a side
CUDA stream and normalises it there.

It cannot run unmodified on a CPU-only machine.
"""
import argparse
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class data_prefetcher():
    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).cuda().view(1, 3, 1, 1)
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)
            self.next_input = self.next_input.float()
            self.next_input = self.next_input.sub_(self.mean).div_(self.std)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        input = self.next_input
        target = self.next_target
        if input is not None:
            input.record_stream(torch.cuda.current_stream())
        if target is not None:
            target.record_stream(torch.cuda.current_stream())
        self.preload()
        return input, target


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch-size', type=int, default=4)
    parser.add_argument('--batches', type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    n = args.batch_size * args.batches
    images = torch.randint(0, 256, (n, 3, 6, 6), dtype=torch.uint8)
    labels = torch.randint(0, 3, (n,))
    train_loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch_size,
                              shuffle=True, num_workers=0, pin_memory=True)

    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    prefetcher = data_prefetcher(train_loader)
    input, target = prefetcher.next()
    i = 0
    while input is not None:
        i += 1
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        input, target = prefetcher.next()
    torch.cuda.synchronize()

    assert i == args.batches, (i, args.batches)
    assert math.isfinite(loss.item())
    print(f'FINAL project=stream_prefetcher batches={i} loss={loss.item():.4f}')


if __name__ == '__main__':
    main()
