import os

import torch
import torch.backends.cudnn as cudnn
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))
AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16


def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
n = (torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count())
scaler = torch.amp.GradScaler(DEVICE_TYPE)
with torch.amp.autocast(DEVICE_TYPE, enabled=AUTOCAST_OK):
    pass
CD = torch.get_device_module(DEVICE_TYPE)
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
free = (torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0)
mod = torch.get_device_module(DEVICE_TYPE) if torch.accelerator.is_available() else torch.cpu
mod.synchronize()
