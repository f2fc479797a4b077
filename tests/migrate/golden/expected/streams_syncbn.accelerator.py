import contextlib

import torch
import torch.nn as nn
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

assert torch.accelerator.is_available(), "this script needs a GPU"
model = nn.Sequential(nn.BatchNorm1d(2))
model = (nn.SyncBatchNorm.convert_sync_batchnorm(model) if torch.accelerator.is_available() else model)
stream = torch.Stream(DEVICE_TYPE)
x = torch.zeros(2)
with contextlib.nullcontext():
    y = x * 2
(torch.accelerator.current_stream() if torch.accelerator.is_available() else torch.cpu.current_stream()).wait_stream(stream)
if torch.accelerator.is_available():
    y.record_stream(torch.accelerator.current_stream())
