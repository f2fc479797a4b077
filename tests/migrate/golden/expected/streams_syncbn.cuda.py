import torch
import torch.nn as nn

assert torch.cuda.is_available(), "this script needs a GPU"
model = nn.Sequential(nn.BatchNorm1d(2))
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
stream = torch.cuda.Stream()
x = torch.zeros(2)
with torch.cuda.stream(stream):
    y = x * 2
torch.cuda.current_stream().wait_stream(stream)
y.record_stream(torch.cuda.current_stream())
