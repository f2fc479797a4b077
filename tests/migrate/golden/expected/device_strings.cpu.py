"""Device strings: "cuda" here in a docstring stays."""
import torch

device = torch.device("cpu")
x = torch.ones(2, device="cpu")
y = x.to("cpu")
z = x.to("cpu")
w = x.to("cpu")
v = x.to("cpu")
idx = torch.device("cpu")
same = device.type == "cuda"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to('cpu'), x.to('cpu'), x.to('cpu')]
