import functools

import torch


@torch.amp.custom_fwd(device_type="xpu")
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="xpu")
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler("xpu", init_scale=1024)
with torch.amp.autocast("xpu", dtype=torch.float16):
    pass
with torch.autocast("xpu", dtype=torch.float16):
    pass
scaler2 = torch.amp.GradScaler("xpu")
use_amp = False
amp_autocast = functools.partial(torch.amp.autocast, "xpu")
autocast_fn = functools.partial(torch.amp.autocast, "xpu")
with torch.amp.autocast("xpu", enabled=use_amp):
    pass
with torch.amp.autocast("xpu", enabled=True, dtype=torch.float16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
