import functools

import torch


@torch.amp.custom_fwd(device_type="mps")
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="mps")
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler("mps", init_scale=1024)
with torch.amp.autocast("mps", dtype=torch.float16):
    pass
with torch.autocast("mps", dtype=torch.float16):
    pass
scaler2 = torch.amp.GradScaler("mps")
use_amp = False
amp_autocast = functools.partial(torch.amp.autocast, "mps")
autocast_fn = functools.partial(torch.amp.autocast, "mps")
with torch.amp.autocast("mps", enabled=use_amp):
    pass
with torch.amp.autocast("mps", enabled=True, dtype=torch.float16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
