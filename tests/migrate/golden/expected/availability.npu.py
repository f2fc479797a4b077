import torch
import torch_npu

device = torch.device("npu" if torch.npu.is_available() else "cpu")
loader_kwargs = {"pin_memory": torch.npu.is_available()}
