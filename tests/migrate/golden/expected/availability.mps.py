import torch

device = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
loader_kwargs = {"pin_memory": torch.backends.mps.is_available()}
