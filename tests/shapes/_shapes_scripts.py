"""Training scripts the shapes tests run, unmodified: no DETECTOR in them unless said.

A comment `# dynamic: NAME, NAME` or `# static: NAME` on a line says which call sites of that line
the report must flag as dynamic, or list as static (with --all); `expected(script)` reads them.
"""

from __future__ import annotations

import re

# A variable-length sequence model: the embedding and the GRU see every length; what follows the
# GRU's last hidden state (batch, 16) has fixed shapes.
SEQUENCE = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequenceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.rnn = nn.GRU(16, 16, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens):
        x = self.embed(tokens)  # dynamic: torch.nn.Embedding
        _, hidden = self.rnn(x)  # dynamic: torch.nn.GRU
        last = hidden[-1]  # static: torch.Tensor.__getitem__
        return self.head(last)  # static: torch.nn.Linear


torch.manual_seed(0)
model = SequenceModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lengths = [5, 9, 7, 5, 12, 9]
batches = [(torch.randint(0, 100, (4, n)), torch.randint(0, 3, (4,))) for n in lengths]
for tokens, labels in batches:  # dynamic: DETECTOR.start (batch)
    logits = model(tokens)  # dynamic: SequenceModel
    loss = F.cross_entropy(logits, labels)  # static: torch.nn.functional.cross_entropy
    optimizer.zero_grad()
    loss.backward()  # static: torch.Tensor.backward
    optimizer.step()
print("trained", len(lengths))
'''

# An image model fed varying resolutions: convolution and activation vary, the adaptive pool
# brings every resolution to (batch, 4, 1, 1), and all that follows it is fixed.
IMAGES = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 2)

    def forward(self, images):
        x = F.relu(self.conv(images))  # dynamic: torch.nn.Conv2d, torch.nn.functional.relu
        x = self.pool(x).flatten(1)  # dynamic: torch.nn.AdaptiveAvgPool2d  # static: torch.Tensor.flatten
        return self.fc(x)  # static: torch.nn.Linear


def train_one_epoch(model, loader, optimizer):
    for step, (images, labels) in enumerate(loader):  # dynamic: DETECTOR.start (batch)
        loss = F.cross_entropy(model(images), labels)  # dynamic: ConvNet  # static: torch.nn.functional.cross_entropy
        optimizer.zero_grad()
        loss.backward()  # static: torch.Tensor.backward
        optimizer.step()


def main():
    torch.manual_seed(0)
    model = ConvNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(2, 3, side, side), torch.tensor([0, 1])) for side in (8, 12, 16, 8)]
    for epoch in range(2):
        train_one_epoch(model, loader, optimizer)


if __name__ == "__main__":
    main()
'''

# The loop behind a progress bar (a stand-in for tqdm, which the test environment may lack).
TQDM = '''\
import sys
import torch


class tqdm:
    def __init__(self, iterable, **options):
        self.iterable = iterable

    def __iter__(self):
        yield from self.iterable

    def set_description(self, text):
        pass


def run(steps):
    weight = torch.zeros(3, requires_grad=True)
    optim = torch.optim.SGD([weight], lr=0.1)
    pbar = tqdm(range(steps))
    for i in pbar:
        x = torch.ones(i % 3 + 1, 3)
        loss = (x * weight).sum()
        loss.backward()
        optim.step()
        pbar.set_description(f"step {i}")
    print("ARGS", sys.argv[1:])


run(int(sys.argv[1]))
'''

# Fails at its fourth step: the report must still hold the three before it.
FAILING = '''\
import torch

weight = torch.zeros(2, requires_grad=True)
for step in range(10):
    x = torch.ones(step + 1, 2)
    (x * weight).sum().backward()
    if step == 3:
        raise RuntimeError("boom at step 3")
'''

# Two ranks of DDP on gloo, each with batches of its own sizes, around a model of the script's own
# (whose calls inside are the user's, seen through the wrapper).
DDP = '''\
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()  # dynamic: torch.nn.Linear, torch.Tensor.relu


dist.init_process_group("gloo")
rank = dist.get_rank()
model = DistributedDataParallel(Net())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for n in [2, 4, 3, 2]:  # static: DETECTOR.start (batch)
    x = torch.ones(n + rank, 3)  # dynamic: torch.ones
    loss = model(x).sum()  # dynamic: torch.nn.parallel.DistributedDataParallel, torch.Tensor.sum
    optimizer.zero_grad()
    loss.backward()  # static: torch.Tensor.backward
    optimizer.step()
dist.destroy_process_group()
'''

# Nothing that trains: no loop to find.
NO_LOOP = '''\
import torch

for x in [torch.ones(2), torch.ones(3)]:
    print(x.sum())
'''

_TAG = re.compile(r"#\s*(dynamic|static):\s*([^#]+)")


def expected(script: str) -> dict[str, set[tuple[int, str]]]:
    """{"dynamic": {(line, function), ...}, "static": {...}} from the script's comments."""
    found: dict[str, set] = {"dynamic": set(), "static": set()}
    for number, line in enumerate(script.splitlines(), 1):
        for kind, names in _TAG.findall(line):
            found[kind] |= {(number, name.strip()) for name in names.split(",") if name.strip()}
    return found
