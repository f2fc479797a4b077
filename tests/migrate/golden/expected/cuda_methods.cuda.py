import torch

model = torch.nn.Linear(2, 2).cuda()
x = torch.ones(2).cuda(non_blocking=True)
y = torch.ones(2).cuda(args.gpu)
device = torch.device("cuda:1")
z = torch.ones(2).cuda(device)
w = torch.ones(2).cuda('cuda:0', non_blocking=True)
v = torch.ones(2).cuda(x.device)
u = torch.ones(2).cuda(torch.cuda.current_device())
moved = (x.cuda if torch.cuda.is_available() else x.cpu)()
