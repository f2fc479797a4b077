import torch
import torch_npu


@torch.npu.amp.custom_fwd
def forward(ctx, x):
    return x


@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)
def forward32(ctx, x):
    return x


scaler = torch.npu.amp.GradScaler(init_scale=1024)
with torch.npu.amp.autocast(dtype=torch.float16):
    pass
with torch.autocast("npu", dtype=torch.float16):
    pass
scaler2 = torch.amp.GradScaler("npu")
use_amp = False
amp_autocast = torch.npu.amp.autocast
autocast_fn = torch.npu.amp.autocast
with torch.npu.amp.autocast(use_amp):
    pass
with torch.npu.amp.autocast(True, torch.float16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
