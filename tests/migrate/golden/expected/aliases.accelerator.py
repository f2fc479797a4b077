import torch
import torch.backends.cudnn as cudnn
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
n = (torch.accelerator.device_count() if torch.accelerator.is_available() else 1)
scaler = torch.amp.GradScaler(DEVICE_TYPE)
with torch.amp.autocast(DEVICE_TYPE):
    pass
CD = torch.get_device_module(DEVICE_TYPE)
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
free = (torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0)
mod = torch.get_device_module(DEVICE_TYPE) if torch.accelerator.is_available() else torch.cpu
mod.synchronize()
