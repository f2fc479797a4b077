import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group("nccl")
dist.init_process_group(backend=dist.Backend.NCCL)
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)
dist.init_process_group('nccl', init_method='env://')
ok = dist.is_nccl_available()
