import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.xpu.synchronize()
n = torch.xpu.device_count()
scaler = torch.amp.GradScaler("xpu")
with torch.amp.autocast("xpu"):
    pass
CD = torch.cuda
torch.xpu.synchronize()
free = torch.xpu.memory_allocated()
