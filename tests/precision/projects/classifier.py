"""A small CUDA classifier trainer, in the style of the examples people start from, for the
precision tools: its second layer can be made to lose precision (PRECISION_FAULT=float16: its
activations rounded through float16) or to overflow at its second step (PRECISION_FAULT=inf),
and --amp runs the forward pass under bfloat16 autocast.

    python classifier.py --steps 4 [--amp]
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        x = self.linear(x)
        fault = os.environ.get("PRECISION_FAULT")
        if fault == "float16":
            x = x.half().float()
        elif fault == "inf" and self.training and self.calls == 2:
            x = x * float("inf")
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = Block(64)
        self.fc3 = nn.Linear(64, 4)

    def forward(self, x):
        x = self.act(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--amp", action="store_true", help="bfloat16 autocast")
    args = parser.parse_args()

    torch.manual_seed(1)
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss().cuda()
    inputs = torch.randn(args.steps, 32, 16)
    labels = (inputs.sum(dim=2) > 0).long() + 2 * (inputs[:, :, 0] > 0).long()
    for step in range(args.steps):
        x, y = inputs[step].cuda(non_blocking=True), labels[step].cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.6f}")
    print(f"FINAL project=classifier steps={args.steps} loss={loss.item():.6f}")


if __name__ == "__main__":
    main()
