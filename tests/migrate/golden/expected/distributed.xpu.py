import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["ZE_AFFINITY_MASK"] = "0,1"
dist.init_process_group("xccl")
dist.init_process_group(backend="xccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.xpu.set_device(local_rank)
model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)
dist.init_process_group('xccl', init_method='env://')
ok = dist.is_backend_available("xccl")
