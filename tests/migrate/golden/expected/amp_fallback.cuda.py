import torch

try:
    from torch.cuda.amp import GradScaler, autocast
except ImportError:
    GradScaler = None
    autocast = None
use_amp = False
scaler = GradScaler(2.0**10, enabled=use_amp) if GradScaler is not None else None
with autocast(enabled=use_amp):
    pass
