"""apex's fused optimizers, as NVIDIA's DeepLearningExamples (FastPitch) build them from one set of
keyword arguments, each model with its own optimizer and both through one amp.initialize:

    optimizer = FusedAdam(model.parameters(), **kw)     # adam_w_mode=True: decoupled decay
    optimizer = FusedLAMB(model.parameters(), **kw)

Needs apex and a CUDA GPU as it is.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import FusedAdam, FusedLAMB

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('-lr', '--learning-rate', type=float, default=0.03)
parser.add_argument('--weight-decay', type=float, default=1e-2)
parser.add_argument('--amp', action='store_true', help='Enable AMP')
args = parser.parse_args()

torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16)
targets = torch.sin(inputs[..., :4] * 2)


def build():
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4)).cuda()


kw = dict(lr=args.learning_rate, betas=(0.9, 0.98), eps=1e-9, weight_decay=args.weight_decay)
encoder, decoder = build(), build()
adam = FusedAdam(encoder.parameters(), **kw)
lamb = FusedLAMB(decoder.parameters(), lr=args.learning_rate, betas=(0.9, 0.98), eps=1e-6,
                 weight_decay=args.weight_decay, max_grad_norm=1.0)

if args.amp:
    [encoder, decoder], [adam, lamb] = amp.initialize([encoder, decoder], [adam, lamb], opt_level="O1")

for step in range(args.steps):
    x, y = inputs[step].cuda(), targets[step].cuda()
    losses = {}
    for name, model, optimizer in (('adam', encoder, adam), ('lamb', decoder, lamb)):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if args.amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        losses[name] = loss.item()
    print(f'step {step} adam {losses["adam"]:.6f} lamb {losses["lamb"]:.6f}')

print(f'FINAL project=fused_optimizers amp={args.amp} steps={args.steps} '
      f'loss_adam={losses["adam"]:.6f} loss_lamb={losses["lamb"]:.6f}')
