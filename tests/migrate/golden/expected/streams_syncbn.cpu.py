import torch
import torch.nn as nn


class HostStream(torch.cpu.Stream):
    """A CUDA stream on the CPU: torch.cpu.Stream, with the synchronize() and query() CUDA's streams have."""

    def __init__(self, device=None, priority=0, **kwargs):
        super().__init__()

    def synchronize(self):
        pass

    def query(self):
        return True


assert torch.cpu.is_available(), "this script needs a GPU"
model = nn.Sequential(nn.BatchNorm1d(2))
stream = HostStream()
x = torch.zeros(2)
with torch.cpu.stream(stream):
    y = x * 2
HostStream().wait_stream(stream)
