"""Device strings: "cuda" here in a docstring stays."""
import torch
import torch_npu

device = torch.device("npu")
x = torch.ones(2, device="npu:1")
y = x.to(f"npu:{rank}")
z = x.to("npu:%d" % rank)
w = x.to("npu:" + str(rank))
v = x.to("npu:{}".format(rank))
idx = torch.device("npu", rank)
same = device.type == "npu"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to('npu:%d' % rank), x.to('npu:{}'.format(rank)), x.to('npu:' + str(rank))]
