import torch

x = torch.ones(2).to("cpu")
y = torch.zeros(2, device="cpu")
state = torch.load("ckpt.pt", map_location="cpu")
count = torch.ones(3).sum(0)
