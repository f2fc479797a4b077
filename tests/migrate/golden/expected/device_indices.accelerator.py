import os

import torch
import torch.multiprocessing as mp
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


x = torch.ones(2).to(f"{DEVICE_TYPE}:0")
y = torch.zeros(2, device=f"{DEVICE_TYPE}:1")
state = torch.load("ckpt.pt", map_location=DEVICE_TYPE)
count = torch.ones(3).sum(0)


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(torch.device(DEVICE_TYPE, self.gpu_id))

    def step(self, x, dtype):
        x = x.to(torch.device(DEVICE_TYPE, self.gpu_id), non_blocking=True)
        return x.to(dtype)


def worker(rank, world_size):
    state = torch.load("ckpt.pt", map_location=DEVICE_TYPE)
    return torch.zeros(2, device=torch.device(DEVICE_TYPE, rank))


mp.spawn(worker, args=(2,), nprocs=(torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count()))
