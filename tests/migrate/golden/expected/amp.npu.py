import torch
import torch_npu


@torch.amp.custom_fwd(device_type="npu")
def forward(ctx, x):
    return x


@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="npu")
def forward32(ctx, x):
    return x


scaler = torch.amp.GradScaler("npu", init_scale=1024)
with torch.amp.autocast("npu", dtype=torch.float16):
    pass
with torch.autocast("npu", dtype=torch.float16):
    pass
scaler2 = torch.amp.GradScaler("npu")
