import torch

x = torch.ones(2).to("xpu:0")
y = torch.zeros(2, device="xpu:1")
state = torch.load("ckpt.pt", map_location="xpu:0")
count = torch.ones(3).sum(0)
