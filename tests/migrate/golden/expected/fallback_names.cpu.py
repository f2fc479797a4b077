import contextlib

import torch

try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.cpu.is_available()
Tensor = torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, torch.FloatTensor):
    y = Tensor(2, 3).fill_(1.0)
labels = torch.LongTensor([1, 0])
half = x.type(torch.HalfTensor, non_blocking=True)
dtype = 'bfloat16' if torch.cpu.is_available() else 'float16'
major, minor = (0, 0)
with contextlib.nullcontext():
    y = x * 2
