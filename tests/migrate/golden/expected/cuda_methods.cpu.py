import torch

model = torch.nn.Linear(2, 2).cpu()
x = torch.ones(2).cpu()
y = torch.ones(2).cpu()
device = torch.device("cpu")
z = torch.ones(2).cpu()
w = torch.ones(2).cpu()
v = torch.ones(2).cpu()
u = torch.ones(2).cpu()
moved = x.cpu()
