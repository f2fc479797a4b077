"""Device strings: "cuda" here in a docstring stays."""
import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

device = torch.device(DEVICE_TYPE)
x = torch.ones(2, device=f"{DEVICE_TYPE}:1")
y = x.to(f"{DEVICE_TYPE}:{rank}")
z = x.to(f"{DEVICE_TYPE}:%d" % rank)
w = x.to(f"{DEVICE_TYPE}:" + str(rank))
v = x.to(f"{DEVICE_TYPE}:{{}}".format(rank))
idx = torch.device(DEVICE_TYPE, rank)
same = device.type == DEVICE_TYPE != "cpu"
print("training on cuda")  # a log message: left alone
path = "checkpoints/cuda_best.pt"
quoted = [x.to(f'{DEVICE_TYPE}:%d' % rank), x.to(f'{DEVICE_TYPE}:{{}}'.format(rank)), x.to(f'{DEVICE_TYPE}:' + str(rank))]
