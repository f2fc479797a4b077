import torch
import torch_npu

with torch.npu.device(1):
    x = torch.ones(2).npu()
with torch.npu.device(x.device):
    y = x * 2
