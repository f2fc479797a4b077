import functools

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))
AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16


@torch.amp.custom_fwd(device_type=DEVICE_TYPE)
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type=DEVICE_TYPE)
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=1024)
with torch.amp.autocast(DEVICE_TYPE, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16, enabled=AUTOCAST_OK):
    pass
with torch.autocast(DEVICE_TYPE, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16, enabled=AUTOCAST_OK):
    pass
scaler2 = torch.amp.GradScaler(DEVICE_TYPE)
use_amp = False
amp_autocast = functools.partial(torch.amp.autocast, DEVICE_TYPE, enabled=AUTOCAST_OK)
autocast_fn = functools.partial(torch.amp.autocast, DEVICE_TYPE, enabled=AUTOCAST_OK)
with torch.amp.autocast(DEVICE_TYPE, enabled=use_amp and AUTOCAST_OK):
    pass
with torch.amp.autocast(DEVICE_TYPE, enabled=AUTOCAST_OK, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
