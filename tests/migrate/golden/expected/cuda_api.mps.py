import torch
import platform

torch.manual_seed(0)
if torch.backends.mps.is_available():
    torch.mps.synchronize()
torch.mps.empty_cache()
n = torch.mps.device_count()
peak = 0 / 2**20
name = platform.processor()
props = torch.cuda.get_device_properties(0)
