import os

import torch
import torch.multiprocessing as mp
import torch_npu

x = torch.ones(2).to("npu:0")
y = torch.zeros(2, device="npu:1")
state = torch.load("ckpt.pt", map_location="npu:0")
count = torch.ones(3).sum(0)


class Trainer:
    def __init__(self, model):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(torch.device("npu", self.gpu_id))

    def step(self, x, dtype):
        x = x.to(torch.device("npu", self.gpu_id), non_blocking=True)
        return x.to(dtype)


def worker(rank, world_size):
    state = torch.load("ckpt.pt", map_location=torch.device("npu", rank))
    return torch.zeros(2, device=torch.device("npu", rank))


mp.spawn(worker, args=(2,), nprocs=torch.npu.device_count())
