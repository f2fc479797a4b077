import torch
from torch.utils.data import DataLoader, TensorDataset
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

use_cuda = torch.accelerator.is_available()
x = torch.ones(2)
staging = torch.empty(4, pin_memory=torch.accelerator.is_available())
loader = DataLoader(TensorDataset(x), batch_size=1, pin_memory=use_cuda and torch.accelerator.is_available())
kwargs = dict(num_workers=0, pin_memory=torch.accelerator.is_available(), pin_memory_device=DEVICE_TYPE)
x = (x.pin_memory() if torch.accelerator.is_available() else x).to(DEVICE_TYPE, non_blocking=True)
y = torch.zeros(2).pin_memory()
