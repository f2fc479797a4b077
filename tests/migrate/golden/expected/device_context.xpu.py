import torch

with torch.xpu.device(1):
    x = torch.ones(2).xpu()
