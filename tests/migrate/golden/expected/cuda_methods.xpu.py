import torch

model = torch.nn.Linear(2, 2).xpu()
x = torch.ones(2).xpu(non_blocking=True)
y = torch.ones(2).xpu(args.gpu)
