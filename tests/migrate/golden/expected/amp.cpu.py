import torch
import functools


@torch.amp.custom_fwd(device_type="cpu")
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="cpu")
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler("cpu", init_scale=1024)
with torch.amp.autocast("cpu", dtype=torch.bfloat16):
    pass
with torch.autocast("cpu", dtype=torch.bfloat16):
    pass
scaler2 = torch.amp.GradScaler("cpu")
use_amp = False
amp_autocast = functools.partial(torch.amp.autocast, "cpu")
autocast_fn = functools.partial(torch.amp.autocast, "cpu")
with torch.amp.autocast("cpu", enabled=use_amp):
    pass
with torch.amp.autocast("cpu", enabled=True, dtype=torch.bfloat16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
