import os

import torch
import torch.multiprocessing as mp


def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


x = torch.ones(2).to("cpu")
y = torch.zeros(2, device="cpu")
state = torch.load("ckpt.pt", map_location="cpu")
count = torch.ones(3).sum(0)


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to("cpu")

    def step(self, x, dtype):
        x = x.to("cpu", non_blocking=True)
        return x.to(dtype)


def worker(rank, world_size):
    state = torch.load("ckpt.pt", map_location="cpu")
    return torch.zeros(2, device="cpu")


mp.spawn(worker, args=(2,), nprocs=host_device_count())
