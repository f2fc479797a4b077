"""plain_o1 written by hand for the CPU with torch.amp: autocast in bfloat16 where the CPU computes
it natively (the cpu target's rule), a dynamic GradScaler. Same seed, same data, same steps."""
import argparse

import torch
import torch.nn as nn

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--lr', type=float, default=0.3)
args = parser.parse_args()

torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16) * 2
targets = inputs[..., :4].argmax(dim=-1)  # a class the model can learn

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
scaler = torch.amp.GradScaler("cpu")

for step in range(args.steps):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
        output = model(inputs[step])
        loss = criterion(output, targets[step])
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(f'step {step} loss {loss.item():.6f}')

print(f'FINAL reference=plain_o1 autocast={CPU_BF16} steps={args.steps} loss={loss.item():.6f}')
