"""A detector-style trainer that passes every kind of value to `.cuda(...)`: an index option that
may be left unset (`--gpu`, None), a device object, the device's name, the current device's index
from `torch.cuda.current_device()`, and a helper whose parameter gets each of these in turn.

It has only a GPU path. Unmodified it needs a GPU: python device_kinds.py
"""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--gpu', type=int, default=None, help='GPU index; unset: the current one')
parser.add_argument('--device', default='cuda:0', help='where the evaluation copy goes')
parser.add_argument('--steps', type=int, default=4)
args = parser.parse_args()


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
        self.register_buffer('anchors', torch.linspace(0, 1, 2))

    def forward(self, x):
        return self.body(x) + self.anchors


def to_gpu(batch, where):
    """Move a batch to `where`, as the loaders of such projects do: an index, None or a device."""
    return [t.cuda(where) for t in batch]


model = Detector().cuda(args.gpu)
device = torch.device('cuda:0')
model.cuda(device)
current = torch.cuda.current_device()
state = {k: v.cpu() for k, v in model.state_dict().items()}
model.load_state_dict({k: v.cuda(current) for k, v in state.items()})

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(args.steps):
    where = [args.gpu, current, device, 'cuda'][step % 4]
    inputs, targets = to_gpu([torch.randn(4, 6), torch.randn(4, 2)], where)
    loss = nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

evaluation = Detector().cuda(args.device)
evaluation.load_state_dict(model.state_dict())
with torch.no_grad():
    check = evaluation(torch.randn(2, 6).cuda(args.device))
assert check.device == next(model.parameters()).device
print(f'FINAL project=device_kinds steps={args.steps} loss={loss.item():.4f}')
