import torch
import torch_npu

x = torch.ones(2).to("npu:0")
y = torch.zeros(2, device="npu:1")
state = torch.load("ckpt.pt", map_location="npu:0")
count = torch.ones(3).sum(0)
