import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

x = torch.ones(2).to(f"{DEVICE_TYPE}:0")
y = torch.zeros(2, device=f"{DEVICE_TYPE}:1")
state = torch.load("ckpt.pt", map_location=DEVICE_TYPE)
count = torch.ones(3).sum(0)
