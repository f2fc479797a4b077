import torch
import torch.cuda as tc
from torch import cuda
from torch.cuda import amp
import torch.backends.cudnn as cudnn

cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
tc.synchronize()
n = cuda.device_count()
scaler = amp.GradScaler()
with amp.autocast():
    pass
CD = torch.cuda
CD.synchronize()
free = CD.memory_allocated()
mod = torch.cuda if torch.cuda.is_available() else torch.cpu
mod.synchronize()
