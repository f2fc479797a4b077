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
