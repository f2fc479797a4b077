"""TorchScript helpers (@torch.jit.script with *_like and device= factories) and a traced module,
on `device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')`.

Unmodified on a CPU-only machine: python jit_helper.py
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=3)
args = parser.parse_args()

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
torch.manual_seed(0)


@torch.jit.script
def smooth_targets(target: torch.Tensor, logits: torch.Tensor, eps: float) -> torch.Tensor:
    n = logits.size(-1)
    off = torch.ones_like(logits) * (eps / (n - 1))
    hot = torch.zeros_like(logits).scatter_(-1, target.unsqueeze(-1), 1.0)
    return torch.where(hot > 0, torch.full_like(logits, 1.0 - eps), off)


@torch.jit.script
def length_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device, dtype=lengths.dtype)
    return (positions.unsqueeze(0) < lengths.unsqueeze(1)).float()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 12)
        self.out = nn.Linear(12, 4)

    def forward(self, x):
        return self.out(torch.tanh(self.proj(x)))


model = Encoder().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(5, 6, device=device)
y = torch.randint(0, 4, (5,), device=device)
lengths = torch.tensor([6, 3, 1, 5, 2], device=device)

for step in range(args.steps):
    optimizer.zero_grad()
    masked = x * length_mask(lengths, 6)
    logits = model(masked)
    soft = smooth_targets(y, logits, 0.1)
    loss = torch.sum(-soft * F.log_softmax(logits, dim=-1), dim=-1).mean()
    loss.backward()
    optimizer.step()
    print(f'step {step}: loss {loss.item():.4f}')

model.eval()
example = torch.randn(2, 6, device=device)
traced = torch.jit.trace(model, example)
with torch.no_grad():
    torch.testing.assert_close(traced(example), model(example))
    traced_out = traced(torch.randn(3, 6, device=device))
if device.type == 'cuda':
    torch.cuda.synchronize()

assert traced_out.shape == (3, 4) and math.isfinite(loss.item())
print(f'FINAL project=jit_helper device={device.type} steps={args.steps} loss={loss.item():.4f}')
