import torch
import torch.nn as nn
import torch_npu

assert torch.npu.is_available(), "this script needs a GPU"
model = nn.Sequential(nn.BatchNorm1d(2))
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
stream = torch.npu.Stream()
x = torch.zeros(2)
with torch.npu.stream(stream):
    y = x * 2
torch.npu.current_stream().wait_stream(stream)
y.record_stream(torch.npu.current_stream())
