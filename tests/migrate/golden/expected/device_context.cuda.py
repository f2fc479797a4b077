import torch

with torch.cuda.device(1):
    x = torch.ones(2).cuda()
with torch.cuda.device(x.device):
    y = x * 2
