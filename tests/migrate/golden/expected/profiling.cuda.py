import torch
from torch.profiler import ProfilerActivity, profile

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
    y = torch.ones(2) * 2
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5))
use_bf16 = torch.version.cuda is not None and torch.cuda.is_bf16_supported()
