"""Device strings: "cuda" here in a docstring stays."""
import torch

device = torch.device("xpu")
x = torch.ones(2, device="xpu:1")
y = x.to(f"xpu:{rank}")
z = x.to("xpu:%d" % rank)
w = x.to("xpu:" + str(rank))
v = x.to("xpu:{}".format(rank))
idx = torch.device("xpu", rank)
same = device.type == "xpu"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to('xpu:%d' % rank), x.to('xpu:{}'.format(rank)), x.to('xpu:' + str(rank))]
