import torch

model = torch.nn.Linear(2, 2).xpu()
x = torch.ones(2).xpu(non_blocking=True)
y = torch.ones(2).xpu(args.gpu)
device = torch.device("xpu:1")
z = torch.ones(2).xpu(device)
w = torch.ones(2).xpu('xpu:0', non_blocking=True)
v = torch.ones(2).xpu(x.device)
u = torch.ones(2).xpu(torch.xpu.current_device())
moved = (x.xpu if torch.xpu.is_available() else x.cpu)()
