"""pytorch/examples' ways of saying that a run needs a GPU (super_resolution's `--cuda` check, a
benchmark's assertion): both must still refuse a run where the target has no device.

Unmodified it needs a GPU: python gpu_checks.py --cuda
"""
import argparse
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description='two checks that a GPU is there')
parser.add_argument('--cuda', action='store_true', help='use cuda?')
parser.add_argument('--steps', type=int, default=3)
parser.add_argument('--seed', type=int, default=123, help='random seed to use. Default=123')
opt = parser.parse_args()

if opt.cuda and not torch.cuda.is_available():
    raise Exception("No GPU found, please run without --cuda")

torch.manual_seed(opt.seed)
device = torch.device("cuda" if opt.cuda else "cpu")

model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.MSELoss()
images = torch.randn(4, 1, 8, 8, device=device)

for step in range(opt.steps):
    optimizer.zero_grad()
    loss = criterion(model(images), images)
    loss.backward()
    optimizer.step()

# the timing below is the GPU's: the script refuses to report anything else
assert torch.cuda.is_available(), "the benchmark needs a CUDA GPU"
torch.cuda.synchronize()
start = time.perf_counter()
with torch.no_grad():
    model(images)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"FINAL project=gpu_checks steps={opt.steps} loss={loss.item():.4f} ms={1000 * elapsed:.2f}")
