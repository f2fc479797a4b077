"""apex's README loop: amp.initialize at O1, then every backward through amp.scale_loss.

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()

Needs apex and a CUDA GPU as it is.
"""
import argparse

import torch
import torch.nn as nn
from apex import amp

parser = argparse.ArgumentParser(description='apex O1 training')
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--lr', type=float, default=0.3)
args = parser.parse_args()

torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16) * 2
targets = inputs[..., :4].argmax(dim=-1)  # a class the model can learn

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).cuda()
criterion = nn.CrossEntropyLoss().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

# Allow Amp to perform casts as required by the opt_level
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")

for step in range(args.steps):
    images = inputs[step].cuda(non_blocking=True)
    target = targets[step].cuda(non_blocking=True)
    output = model(images)
    loss = criterion(output, target)

    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    print(f'step {step} loss {loss.item():.6f}')

print(f'FINAL project=plain_o1 steps={args.steps} loss={loss.item():.6f}')
