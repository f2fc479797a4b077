import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group(torch.distributed.get_default_backend_for_device(DEVICE_TYPE))
dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(DEVICE_TYPE))
local_rank = int(os.environ["LOCAL_RANK"])
if torch.accelerator.is_available():
    torch.accelerator.set_device_index(local_rank)
model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank] if torch.accelerator.is_available() else None, output_device=local_rank if torch.accelerator.is_available() else None)
dist.init_process_group(torch.distributed.get_default_backend_for_device(DEVICE_TYPE), init_method='env://')
ok = dist.is_backend_available(torch.distributed.get_default_backend_for_device(DEVICE_TYPE))
