import os

import torch
import torch.multiprocessing as mp

x = torch.ones(2).to("mps")
y = torch.zeros(2, device="mps")
state = torch.load("ckpt.pt", map_location="mps")
count = torch.ones(3).sum(0)


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to("mps")

    def step(self, x, dtype):
        x = x.to("mps", non_blocking=True)
        return x.to(dtype)


def worker(rank, world_size):
    state = torch.load("ckpt.pt", map_location="mps")
    return torch.zeros(2, device="mps")


mp.spawn(worker, args=(2,), nprocs=torch.mps.device_count())
