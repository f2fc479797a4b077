"""fused_optimizers written by hand for the CPU: torchport.optim's twins of apex's FusedAdam
(adam_w_mode=True: FusedAdamW) and FusedLAMB (FusedLamb) with apex's defaults, torch.amp with
one GradScaler for both, autocast in bfloat16 where the CPU computes it natively."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.optim import FusedAdamW, FusedLamb
from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('-lr', '--learning-rate', type=float, default=0.03)
parser.add_argument('--weight-decay', type=float, default=1e-2)
parser.add_argument('--amp', action='store_true')  # (always on here: the project's runs pass it)
args = parser.parse_args()

torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16)
targets = torch.sin(inputs[..., :4] * 2)


def build():
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))


encoder, decoder = build(), build()
adam = FusedAdamW(encoder.parameters(), lr=args.learning_rate, betas=(0.9, 0.98), eps=1e-9,
                  weight_decay=args.weight_decay)
lamb = FusedLamb(decoder.parameters(), lr=args.learning_rate, bias_correction=True, betas=(0.9, 0.98), eps=1e-6,
                 weight_decay=args.weight_decay, grad_averaging=True, max_grad_norm=1.0)
scaler = torch.amp.GradScaler("cpu")

for step in range(args.steps):
    x, y = inputs[step], targets[step]
    losses = {}
    for name, model, optimizer in (('adam', encoder, adam), ('lamb', decoder, lamb)):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
            loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses[name] = loss.item()
    print(f'step {step} adam {losses["adam"]:.6f} lamb {losses["lamb"]:.6f}')

print(f'FINAL reference=fused_optimizers autocast={CPU_BF16} steps={args.steps} '
      f'loss_adam={losses["adam"]:.6f} loss_lamb={losses["lamb"]:.6f}')
