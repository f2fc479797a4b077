import contextlib

import torch

try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.xpu.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, torch.Tensor) and x.device.type == "xpu" and x.dtype == torch.float32:
    y = Tensor(2, 3).fill_(1.0)
labels = torch.LongTensor([1, 0]).to("xpu")
half = x.to("xpu", torch.float16, non_blocking=True)
dtype = 'bfloat16' if torch.xpu.is_available() and torch.xpu.is_bf16_supported() else 'float16'
major, minor = (0, 0)
with contextlib.nullcontext():
    y = x * 2
