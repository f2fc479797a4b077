import torch

x = torch.ones(2).to("mps")
y = torch.zeros(2, device="mps")
state = torch.load("ckpt.pt", map_location="mps")
count = torch.ones(3).sum(0)
