import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
n = torch.cpu.device_count()
scaler = torch.amp.GradScaler("cpu")
with torch.amp.autocast("cpu"):
    pass
CD = torch.cuda
free = 0
