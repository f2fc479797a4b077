"""`torchport dump` overhead: a training step with no recorder and under the dump's recorder
(every module call's outputs and gradients summarised and sampled, and those of the script's own
torch calls: the residual adds and the pooling; the loss and the gradient norms per step), on the
same model and batches, in one process, interleaved: blocks of steps alternate between the two
sides, a block of each per round; a side's step time is its median block over the rounds.

The model is a small CIFAR-style residual network of width 64, ResNet-18's first stage
(convolutions, batch norm, ReLU in place, pooling, a linear head: 31 module calls a step), the
kind of model people compare across devices. At width 32, where the activations cost more against
the convolutions, the ratio measured here was about 1.45x.

    python bench/dump.py [--rounds 10] [--steps 4] [--warmup 2]

Goal: the recorded step at most 1.5x the plain one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn

from torchport.precision.recorder import DumpRecorder

CLOCK = time.perf_counter
GOAL = 1.5


class Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + x)


class Net(nn.Module):
    def __init__(self, width: int = 64, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(Residual(width), nn.MaxPool2d(2), Residual(width), nn.MaxPool2d(2), Residual(width))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds (one block per side each)")
    parser.add_argument("--steps", type=int, default=4, help="steps per block")
    parser.add_argument("--warmup", type=int, default=2, help="steps of each side before timing")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    batch = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))

    def step() -> None:
        loss = criterion(model(batch[0]), batch[1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def block(recorded: bool, steps: int) -> tuple[float, int]:
        recorder = DumpRecorder()
        start = CLOCK()
        if recorded:
            with recorder:
                for _ in range(steps):
                    step()
        else:
            for _ in range(steps):
                step()
        elapsed = (CLOCK() - start) / max(steps, 1)
        size = sum(sample.numel() * 4 for sample in recorder.samples) + 200 * len(recorder.records)
        return elapsed, size // max(steps, 1)

    block(False, args.warmup)
    block(True, args.warmup)
    times: dict[str, list[float]] = {"plain": [], "dump": []}
    size = 0
    for _ in range(args.rounds):
        times["plain"].append(block(False, args.steps)[0])
        elapsed, size = block(True, args.steps)
        times["dump"].append(elapsed)
    plain, dump = (statistics.median(times[side]) * 1e3 for side in ("plain", "dump"))
    ratio = dump / plain
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.rounds} rounds x {args.steps} steps per side")
    print(f"plain step   {plain:8.2f} ms")
    print(f"dumped step  {dump:8.2f} ms   {ratio:.2f}x the plain step (goal <= {GOAL}), about {size / 1e3:.0f} kB a step on disk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
