import torch
from torch.utils.data import DataLoader, TensorDataset

use_cuda = torch.cuda.is_available()
x = torch.ones(2)
staging = torch.empty(4, pin_memory=True)
loader = DataLoader(TensorDataset(x), batch_size=1, pin_memory=use_cuda)
kwargs = dict(num_workers=0, pin_memory=True, pin_memory_device="cuda")
x = x.pin_memory().to("cuda", non_blocking=True)
y = torch.zeros(2).pin_memory()
