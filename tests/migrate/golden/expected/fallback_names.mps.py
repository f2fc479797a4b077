import contextlib

import torch

try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.backends.mps.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, torch.Tensor) and x.device.type == "mps" and x.dtype == torch.float32:
    y = Tensor(2, 3).fill_(1.0)
labels = torch.LongTensor([1, 0]).to("mps")
half = x.to("mps", torch.float16, non_blocking=True)
dtype = 'bfloat16' if torch.backends.mps.is_available() else 'float16'
major, minor = (0, 0)
with contextlib.nullcontext():
    y = x * 2
