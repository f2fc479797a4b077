import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader_kwargs = {"pin_memory": torch.cuda.is_available()}
