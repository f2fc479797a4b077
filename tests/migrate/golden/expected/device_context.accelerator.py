import contextlib

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

with (torch.accelerator.device_index(1) if torch.accelerator.is_available() else contextlib.nullcontext()):
    x = torch.ones(2).to(DEVICE_TYPE)
with (torch.accelerator.device_index(torch.device(x.device).index) if torch.accelerator.is_available() else contextlib.nullcontext()):
    y = x * 2
