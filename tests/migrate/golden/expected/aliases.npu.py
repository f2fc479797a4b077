import torch
import torch.backends.cudnn as cudnn
import torch_npu

cudnn.benchmark = True
torch.npu.matmul.allow_hf32 = True
torch.npu.synchronize()
n = torch.npu.device_count()
scaler = torch.npu.amp.GradScaler()
with torch.npu.amp.autocast():
    pass
CD = torch.npu
torch.npu.synchronize()
free = torch.npu.memory_allocated()
mod = torch.npu if torch.npu.is_available() else torch.cpu
mod.synchronize()
