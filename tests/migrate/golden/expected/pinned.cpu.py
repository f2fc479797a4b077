import torch
from torch.utils.data import DataLoader, TensorDataset

use_cuda = torch.cpu.is_available()
x = torch.ones(2)
staging = torch.empty(4)
loader = DataLoader(TensorDataset(x), batch_size=1)
kwargs = dict(num_workers=0, pin_memory_device="cpu")
x = x.to("cpu", non_blocking=True)
y = torch.zeros(2)
