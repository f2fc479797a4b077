import os

import torch
import torch.backends.cudnn as cudnn
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))


def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
n = host_device_count()
scaler = torch.amp.GradScaler("cpu")
with torch.amp.autocast("cpu", enabled=CPU_BF16):
    pass
CD = torch.cpu
free = 0
mod = torch.cpu
mod.synchronize()
