import torch
import platform

torch.manual_seed(0)
n = torch.cpu.device_count()
peak = 0 / 2**20
name = platform.processor()
props = torch.cuda.get_device_properties(0)
