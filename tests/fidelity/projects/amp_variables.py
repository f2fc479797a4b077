"""timm-style AMP held in variables: a stored autocast reference, a positional enabled flag,
getattr on torch.cuda.amp, and an optional GradScaler import.

Unmodified on a CPU-only machine: python amp_variables.py --no-amp
"""
import argparse
import math
from contextlib import suppress

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from torch.cuda.amp import GradScaler
except ImportError:  # very old torch
    GradScaler = None

parser = argparse.ArgumentParser(description='AMP training')
parser.add_argument('--amp', action=argparse.BooleanOptionalAction, default=True,
                    help='use native torch.cuda.amp mixed precision (default: on)')
parser.add_argument('--steps', type=int, default=3)
parser.add_argument('--batch-size', type=int, default=8)
parser.add_argument('--lr', type=float, default=0.05)
args = parser.parse_args()

use_amp = args.amp
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
torch.manual_seed(0)

# setup automatic mixed-precision (AMP) loss scaling and op casting
amp_autocast = torch.cuda.amp.autocast if use_amp else suppress  # do nothing without AMP
autocast_fn = getattr(torch.cuda.amp, 'autocast')  # e.g. looked up from a config string
scaler = GradScaler(enabled=use_amp) if GradScaler is not None else None
print(f'AMP: {use_amp}, loss scaler: {type(scaler).__name__}')

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
inputs = torch.randn(args.batch_size, 16)
targets = torch.randint(0, 4, (args.batch_size,))


def train_one_step(x, y):
    optimizer.zero_grad()
    with amp_autocast():
        output = model(x)
        loss = F.cross_entropy(output, y)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()


def validate(x, y):
    model.eval()
    with torch.no_grad(), torch.cuda.amp.autocast(use_amp):
        output = model(x)
    with autocast_fn(enabled=use_amp):
        loss = F.cross_entropy(output.float(), y)
    model.train()
    return (output.argmax(dim=1) == y).float().mean().item(), loss.item()


for step in range(args.steps):
    x = inputs.to(device, non_blocking=True)
    y = targets.to(device, non_blocking=True)
    loss = train_one_step(x, y)
    print(f'step {step}: loss {loss:.4f}')

acc, val_loss = validate(inputs.to(device), targets.to(device))
assert math.isfinite(loss) and math.isfinite(val_loss)
print(f'FINAL project=amp_variables amp={use_amp} steps={args.steps} loss={loss:.4f} val_acc={acc:.2f}')
