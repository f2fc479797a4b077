import torch
import torch_npu
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.npu.synchronize()
n = torch.npu.device_count()
scaler = torch.amp.GradScaler("npu")
with torch.amp.autocast("npu"):
    pass
