import contextlib

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch


def device_bf16_supported(*args, **kwargs):
    """torch.cuda.is_bf16_supported() on DEVICE_TYPE: its module's answer (torch.mps and torch.cpu have none: True)."""
    query = getattr(torch.get_device_module(DEVICE_TYPE), "is_bf16_supported", None)
    return query(*args, **kwargs) if query is not None else True


try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.accelerator.is_available()
Tensor = TENSOR_TYPES.FloatTensor if cuda else torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, TENSOR_TYPES.FloatTensor):
    y = Tensor(2, 3).fill_(1.0)
labels = TENSOR_TYPES.LongTensor([1, 0])
half = x.type(TENSOR_TYPES.HalfTensor, non_blocking=True)
dtype = 'bfloat16' if torch.accelerator.is_available() and device_bf16_supported() else 'float16'
major, minor = (torch.get_device_module(DEVICE_TYPE).get_device_capability() if (torch.version.cuda or torch.version.hip) is not None and torch.accelerator.is_available() else (0, 0))
with contextlib.nullcontext():
    y = x * 2
