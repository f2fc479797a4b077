"""o2_clip_checkpoint written by hand for the CPU with torch.amp: O2 is autocast (bfloat16 where
the CPU computes it natively), gradients unscaled before clipping, the scaler's state in the
checkpoint, restored into fresh objects."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--resume-at', type=int, default=4)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--learning_rate', type=float, default=0.3)
parser.add_argument('--max_grad_norm', type=float, default=2.0)
parser.add_argument('--checkpoint', type=str, default='amp_checkpoint.pt')
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def build(seed):
    torch.manual_seed(seed)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9)
    return model, optimizer, torch.amp.GradScaler("cpu")


def train(model, optimizer, scaler, batches):
    model.train()
    for step, (x, y) in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        print(f'step {step} loss {loss.item():.6f}')
    return loss


torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16) * 4
labels = inputs[..., :4].argmax(dim=-1)
batches = [(step, (inputs[step], labels[step])) for step in range(args.steps)]

model, optimizer, scaler = build(seed=1)
split = args.resume_at or args.steps
loss = train(model, optimizer, scaler, batches[:split])
if args.resume_at:
    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'amp': scaler.state_dict()},
               args.checkpoint)
    model, optimizer, scaler = build(seed=2)
    checkpoint = torch.load(args.checkpoint)
    model.load_state_dict(checkpoint['model'])
    optimizer.load_state_dict(checkpoint['optimizer'])
    scaler.load_state_dict(checkpoint['amp'])
    loss = train(model, optimizer, scaler, batches[split:])

print(f'FINAL reference=o2_clip_checkpoint autocast={CPU_BF16} steps={args.steps} loss={loss.item():.6f}')
