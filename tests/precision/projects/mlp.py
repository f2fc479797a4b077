"""A small residual MLP trainer for the precision tools' torch-call records: each block's forward is
written by hand around its two linear layers (F.gelu, a learnt gain, the residual add), the model's
around its blocks (a reshape, torch.tanh), and the loss is F.cross_entropy in the loop.

PRECISION_FAULT=gelu makes one torch function call lose precision, not a module: the CPU kernel of
aten::gelu is replaced by one that computes through float16 and returns float32, as a backend's
kernel that works at half precision would; F.gelu's output is then float32 rounded through float16.

    python mlp.py --steps 3
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def gelu_through_float16(x, approximate="none"):
    half = x.to(torch.float16)
    return (0.5 * half * (1 + torch.erf(half * 0.7071067811865476))).to(x.dtype)


if os.environ.get("PRECISION_FAULT") == "gelu":
    LOSSY_KERNELS = torch.library.Library("aten", "IMPL")
    LOSSY_KERNELS.impl("gelu", gelu_through_float16, "CPU")


class Block(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)
        self.gain = nn.Parameter(torch.linspace(0.5, 1.5, hidden))

    def forward(self, x):
        h = self.up(x)
        h = F.gelu(h) * self.gain
        return x + self.down(h)


class MLP(nn.Module):
    def __init__(self, features=16, width=32, hidden=64, classes=4):
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.blocks = nn.Sequential(Block(width, hidden), Block(width, hidden))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = x.reshape(x.size(0), -1)
        return self.head(torch.tanh(self.blocks(self.embed(x))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(2)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    inputs = torch.randn(args.steps, 32, 4, 4)
    labels = torch.randint(0, 4, (args.steps, 32))
    for step in range(args.steps):
        loss = F.cross_entropy(model(inputs[step]), labels[step])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
