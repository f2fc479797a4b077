import torch

model = torch.nn.Linear(2, 2).cpu()
x = torch.ones(2).cpu()
y = torch.ones(2).cpu()
