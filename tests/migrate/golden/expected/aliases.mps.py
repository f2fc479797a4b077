import torch
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.mps.synchronize()
n = torch.mps.device_count()
scaler = torch.amp.GradScaler("mps")
with torch.amp.autocast("mps"):
    pass
CD = torch.mps
torch.mps.synchronize()
free = torch.mps.current_allocated_memory()
mod = torch.mps if torch.backends.mps.is_available() else torch.cpu
mod.synchronize()
