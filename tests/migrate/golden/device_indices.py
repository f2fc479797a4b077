import torch

x = torch.ones(2).to(0)
y = torch.zeros(2, device=1)
state = torch.load("ckpt.pt", map_location=0)
count = torch.ones(3).sum(0)
