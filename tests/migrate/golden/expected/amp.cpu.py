import functools

import torch
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))


@torch.amp.custom_fwd(device_type="cpu")
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="cpu")
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler("cpu", init_scale=1024)
with torch.amp.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
    pass
with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
    pass
scaler2 = torch.amp.GradScaler("cpu")
use_amp = False
amp_autocast = functools.partial(torch.amp.autocast, "cpu", enabled=CPU_BF16)
autocast_fn = functools.partial(torch.amp.autocast, "cpu", enabled=CPU_BF16)
with torch.amp.autocast("cpu", enabled=use_amp and CPU_BF16):
    pass
with torch.amp.autocast("cpu", enabled=CPU_BF16, dtype=torch.bfloat16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
