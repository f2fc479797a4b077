import torch
import torch_npu

try:
    from torch.cuda.amp import GradScaler, autocast
except ImportError:
    GradScaler = None
    autocast = None
use_amp = False
scaler = torch.npu.amp.GradScaler(2.0**10, enabled=use_amp) if torch.npu.amp.GradScaler is not None else None
with torch.npu.amp.autocast(enabled=use_amp):
    pass
