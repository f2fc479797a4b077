"""Device strings: "cuda" here in a docstring stays."""
import torch

device = torch.device("cuda")
x = torch.ones(2, device="cuda:1")
y = x.to(f"cuda:{rank}")
z = x.to("cuda:%d" % rank)
w = x.to("cuda:" + str(rank))
v = x.to("cuda:{}".format(rank))
idx = torch.device("cuda", rank)
same = device.type == "cuda"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to('cuda:%d' % rank), x.to('cuda:{}'.format(rank)), x.to('cuda:' + str(rank))]
