import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.xpu.synchronize()
n = torch.xpu.device_count()
scaler = torch.amp.GradScaler("xpu")
with torch.amp.autocast("xpu"):
    pass
CD = torch.xpu
torch.xpu.synchronize()
free = torch.xpu.memory_allocated()
mod = torch.xpu if torch.xpu.is_available() else torch.cpu
mod.synchronize()
