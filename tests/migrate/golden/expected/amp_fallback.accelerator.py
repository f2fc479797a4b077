import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))
AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16

try:
    from torch.cuda.amp import GradScaler, autocast
except ImportError:
    GradScaler = None
    autocast = None
use_amp = False
scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None
with torch.amp.autocast(DEVICE_TYPE, enabled=use_amp and AUTOCAST_OK):
    pass
