import torch


@torch.cuda.amp.custom_fwd
def forward(ctx, x):
    return x


@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
def forward32(ctx, x):
    return x


scaler = torch.cuda.amp.GradScaler(init_scale=1024)
with torch.cuda.amp.autocast(dtype=torch.float16):
    pass
with torch.autocast("cuda", dtype=torch.float16):
    pass
scaler2 = torch.amp.GradScaler("cuda")
use_amp = False
amp_autocast = torch.cuda.amp.autocast
autocast_fn = getattr(torch.cuda.amp, "autocast")
with torch.cuda.amp.autocast(use_amp):
    pass
with torch.cuda.amp.autocast(True, torch.float16):
    pass
with amp_autocast(), autocast_fn(enabled=use_amp):
    pass
