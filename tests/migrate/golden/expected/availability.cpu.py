import torch

device = torch.device("cpu")
loader_kwargs = {"pin_memory": torch.cpu.is_available()}
