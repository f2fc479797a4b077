import functools

import torch

model = torch.nn.Linear(2, 2).to("mps")
x = torch.ones(2).to("mps", non_blocking=True)
y = torch.ones(2).to("mps")
device = torch.device("mps")
z = torch.ones(2).to("mps")
w = torch.ones(2).to('mps', non_blocking=True)
v = torch.ones(2).to("mps")
u = torch.ones(2).to("mps")
moved = (functools.partial(x.to, "mps") if torch.backends.mps.is_available() else x.cpu)()
