import torch
import torch_npu

model = torch.nn.Linear(2, 2).npu()
x = torch.ones(2).npu(non_blocking=True)
y = torch.ones(2).npu(args.gpu)
