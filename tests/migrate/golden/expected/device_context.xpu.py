import torch

with torch.xpu.device(1):
    x = torch.ones(2).xpu()
with torch.xpu.device(x.device):
    y = x * 2
