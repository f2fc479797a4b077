import torch

model = torch.nn.Linear(2, 2).to("mps")
x = torch.ones(2).to("mps", non_blocking=True)
y = torch.ones(2).to("mps")
