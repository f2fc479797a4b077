import os

import torch
import torch.distributed as dist
import torch_npu
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group("hccl")
dist.init_process_group(backend="hccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local_rank)
model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)
dist.init_process_group('hccl', init_method='env://')
ok = dist.is_backend_available("hccl")
