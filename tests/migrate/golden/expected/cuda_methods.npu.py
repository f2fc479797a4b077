import torch
import torch_npu

model = torch.nn.Linear(2, 2).npu()
x = torch.ones(2).npu(non_blocking=True)
y = torch.ones(2).npu(args.gpu)
device = torch.device("npu:1")
z = torch.ones(2).npu(device)
w = torch.ones(2).npu('npu:0', non_blocking=True)
v = torch.ones(2).npu(x.device)
u = torch.ones(2).npu(torch.npu.current_device())
moved = (x.npu if torch.npu.is_available() else x.cpu)()
