import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

torch.manual_seed(0)
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
n = torch.accelerator.device_count()
peak = (torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 2**20
name = DEVICE_TYPE
props = torch.cuda.get_device_properties(0)
