import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
n = torch.cpu.device_count()
scaler = torch.amp.GradScaler("cpu")
with torch.amp.autocast("cpu"):
    pass
