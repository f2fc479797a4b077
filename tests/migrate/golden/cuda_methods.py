import torch

model = torch.nn.Linear(2, 2).cuda()
x = torch.ones(2).cuda(non_blocking=True)
y = torch.ones(2).cuda(args.gpu)
