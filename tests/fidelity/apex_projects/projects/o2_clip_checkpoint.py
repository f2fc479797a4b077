"""O2 in the style of the old transformers examples: gradients clipped through
`amp.master_params(optimizer)`, and a checkpoint that carries `'amp': amp.state_dict()`, saved
half-way and loaded back into a fresh model, optimizer and amp (apex's README "Checkpointing").

Needs apex and a CUDA GPU as it is.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--resume-at', type=int, default=4, help='save, rebuild and resume after this step (0: never)')
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--learning_rate', type=float, default=0.3)
parser.add_argument('--max_grad_norm', type=float, default=2.0)
parser.add_argument('--checkpoint', type=str, default='amp_checkpoint.pt')
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def build(seed):
    torch.manual_seed(seed)
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    return model, optimizer


def train(model, optimizer, batches):
    model.train()
    for step, (x, y) in batches:
        x, y = x.cuda(), y.cuda()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        optimizer.step()
        print(f'step {step} loss {loss.item():.6f}')
    return loss


torch.manual_seed(0)
inputs = torch.randn(args.steps, args.batch_size, 16) * 4
labels = inputs[..., :4].argmax(dim=-1)
batches = [(step, (inputs[step], labels[step])) for step in range(args.steps)]

model, optimizer = build(seed=1)
split = args.resume_at or args.steps
loss = train(model, optimizer, batches[:split])
if args.resume_at:
    checkpoint = {
        'model': model.state_dict(),
        'optimizer': optimizer.state_dict(),
        'amp': amp.state_dict(),
    }
    torch.save(checkpoint, args.checkpoint)

    # Restore into fresh objects, initialized differently: only the checkpoint carries the run on.
    model, optimizer = build(seed=2)
    checkpoint = torch.load(args.checkpoint)
    model.load_state_dict(checkpoint['model'])
    optimizer.load_state_dict(checkpoint['optimizer'])
    amp.load_state_dict(checkpoint['amp'])
    loss = train(model, optimizer, batches[split:])

print(f'FINAL project=o2_clip_checkpoint steps={args.steps} loss={loss.item():.6f}')
