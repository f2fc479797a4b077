import os

import torch
import torch.multiprocessing as mp

x = torch.ones(2).to(0)
y = torch.zeros(2, device=1)
state = torch.load("ckpt.pt", map_location=0)
count = torch.ones(3).sum(0)


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)

    def step(self, x, dtype):
        x = x.to(self.gpu_id, non_blocking=True)
        return x.to(dtype)


def worker(rank, world_size):
    state = torch.load("ckpt.pt", map_location=rank)
    return torch.zeros(2, device=rank)


mp.spawn(worker, args=(2,), nprocs=torch.cuda.device_count())
