import torch
from torch.profiler import ProfilerActivity, profile
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def device_bf16_supported(*args, **kwargs):
    """torch.cuda.is_bf16_supported() on DEVICE_TYPE: its module's answer (torch.mps and torch.cpu have none: True)."""
    query = getattr(torch.get_device_module(DEVICE_TYPE), "is_bf16_supported", None)
    return query(*args, **kwargs) if query is not None else True


with profile(activities=torch.profiler.supported_activities(), record_shapes=True) as prof:
    y = torch.ones(2) * 2
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5))
use_bf16 = torch.version.cuda is not None and device_bf16_supported()
