import torch

device = torch.device("xpu" if torch.xpu.is_available() else "cpu")
loader_kwargs = {"pin_memory": torch.xpu.is_available()}
