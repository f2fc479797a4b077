import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

try:
    from torch.cuda.amp import GradScaler, autocast
except ImportError:
    GradScaler = None
    autocast = None
use_amp = False
scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None
with torch.amp.autocast(DEVICE_TYPE, enabled=use_amp):
    pass
