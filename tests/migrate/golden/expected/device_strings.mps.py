"""Device strings: "cuda" here in a docstring stays."""
import torch

device = torch.device("mps")
x = torch.ones(2, device="mps")
y = x.to("mps")
z = x.to("mps")
w = x.to("mps")
v = x.to("mps")
idx = torch.device("mps")
same = device.type == "mps"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to('mps'), x.to('mps'), x.to('mps')]
