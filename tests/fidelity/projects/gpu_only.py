"""A benchmark-style script with only a GPU path: it asserts CUDA and calls .cuda() unconditionally.

It cannot run unmodified on a CPU-only machine.
"""
import argparse
import math
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=3)
parser.add_argument('--batch-size', type=int, default=8)
args = parser.parse_args()

assert torch.cuda.is_available(), 'this script needs a CUDA GPU'

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False

model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5)).cuda()
criterion = nn.CrossEntropyLoss().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

images = torch.randn(args.batch_size, 3, 8, 8).cuda()
labels = torch.randint(0, 5, (args.batch_size,)).cuda()

torch.cuda.synchronize()
start = time.time()
for step in range(args.steps):
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
torch.cuda.synchronize()
elapsed = time.time() - start

assert math.isfinite(loss.item())
print(f'FINAL project=gpu_only steps={args.steps} loss={loss.item():.4f} ms_per_step={1000 * elapsed / args.steps:.2f}')
