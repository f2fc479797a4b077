import torch
import torch.backends.cudnn as cudnn
CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
n = torch.cpu.device_count()
scaler = torch.amp.GradScaler("cpu")
with torch.amp.autocast("cpu", enabled=CPU_BF16):
    pass
CD = torch.cpu
free = 0
mod = torch.cpu
mod.synchronize()
