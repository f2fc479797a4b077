import torch

try:
    from torch.cuda.amp import GradScaler
except ImportError:
    GradScaler = None
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
x = torch.zeros(3).type(Tensor)
if isinstance(x, torch.cuda.FloatTensor):
    y = Tensor(2, 3).fill_(1.0)
labels = torch.cuda.LongTensor([1, 0])
half = x.type(torch.cuda.HalfTensor, non_blocking=True)
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
major, minor = torch.cuda.get_device_capability()
torch.cuda.nvtx.range_push("step")
with torch.cuda.nvtx.range("forward"):
    y = x * 2
torch.cuda.nvtx.range_pop()
