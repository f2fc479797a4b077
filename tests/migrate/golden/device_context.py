import torch

with torch.cuda.device(1):
    x = torch.ones(2).cuda()
