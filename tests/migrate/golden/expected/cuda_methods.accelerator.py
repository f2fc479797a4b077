import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

model = torch.nn.Linear(2, 2).to(DEVICE_TYPE)
x = torch.ones(2).to(DEVICE_TYPE, non_blocking=True)
y = torch.ones(2).to(torch.device(DEVICE_TYPE, args.gpu))
