import contextlib

import torch
import torch_npu

try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.npu.is_available()
Tensor = torch.npu.FloatTensor if cuda else torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, torch.npu.FloatTensor):
    y = Tensor(2, 3).fill_(1.0)
labels = torch.npu.LongTensor([1, 0])
half = x.type(torch.npu.HalfTensor, non_blocking=True)
dtype = 'bfloat16' if torch.npu.is_available() and torch.npu.is_bf16_supported() else 'float16'
major, minor = (torch.npu.get_device_capability() or (0, 0))
with contextlib.nullcontext():
    y = x * 2
