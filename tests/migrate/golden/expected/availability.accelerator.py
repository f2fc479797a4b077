import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

device = torch.device(DEVICE_TYPE)
loader_kwargs = {"pin_memory": torch.accelerator.is_available()}
