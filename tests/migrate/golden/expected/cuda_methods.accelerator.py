import functools

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def accelerator_device(device=None):
    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""
    index = device if device is None or isinstance(device, int) else torch.device(device).index
    return torch.device(DEVICE_TYPE, index)


model = torch.nn.Linear(2, 2).to(DEVICE_TYPE)
x = torch.ones(2).to(DEVICE_TYPE, non_blocking=True)
y = torch.ones(2).to(accelerator_device(args.gpu))
device = torch.device(f"{DEVICE_TYPE}:1")
z = torch.ones(2).to(device)
w = torch.ones(2).to(f"{DEVICE_TYPE}:0", non_blocking=True)
v = torch.ones(2).to(x.device)
u = torch.ones(2).to(accelerator_device((torch.accelerator.current_device_index() if torch.accelerator.is_available() else 0)))
moved = (functools.partial(x.to, DEVICE_TYPE) if torch.accelerator.is_available() else x.cpu)()
