import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.mps.synchronize()
n = torch.mps.device_count()
scaler = torch.amp.GradScaler("mps")
with torch.amp.autocast("mps"):
    pass
