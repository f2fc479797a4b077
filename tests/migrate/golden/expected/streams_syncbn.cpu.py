import torch
import torch.nn as nn

assert torch.cpu.is_available(), "this script needs a GPU"
model = nn.Sequential(nn.BatchNorm1d(2))
stream = torch.cpu.Stream()
x = torch.zeros(2)
with torch.cpu.stream(stream):
    y = x * 2
torch.cpu.current_stream().wait_stream(stream)
