import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group("gloo")
dist.init_process_group(backend="gloo")
local_rank = int(os.environ["LOCAL_RANK"])
model = DDP(torch.nn.Linear(2, 2))
dist.init_process_group('gloo', init_method='env://')
ok = dist.is_backend_available("gloo")
