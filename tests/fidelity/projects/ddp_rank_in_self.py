"""pytorch/examples ddp-tutorial-series (multigpu_torchrun.py) style: the local rank kept in
self.gpu_id and used as the device everywhere.

Launch: torchrun --standalone --nproc_per_node 2 ddp_rank_in_self.py
It cannot run unmodified on a CPU-only machine (NCCL, torch.cuda.set_device).
"""
import argparse
import gc
import math
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


def ddp_setup():
    init_process_group(backend="nccl")


class Trainer:
    def __init__(self, model, train_data, optimizer):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.gpu_id)
        self.model = model.to(self.gpu_id)
        self.train_data = train_data
        self.optimizer = optimizer
        self.model = DDP(self.model, device_ids=[self.gpu_id])

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            source = source.to(self.gpu_id)
            targets = targets.to(self.gpu_id)
            loss = self._run_batch(source, targets)
        return loss

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            loss = self._run_epoch(epoch)
        return loss


def prepare_dataloader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, shuffle=False,
                      sampler=DistributedSampler(dataset))


def main(total_epochs, batch_size):
    ddp_setup()
    torch.manual_seed(0)
    dataset = MyTrainDataset(16)
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer)
    loss = trainer.train(total_epochs)
    # every rank must end with the same weights
    weight = trainer.model.module.weight.detach().clone()
    gathered = [torch.zeros_like(weight) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, weight)
    assert all(torch.equal(w, gathered[0]) for w in gathered)
    assert math.isfinite(loss)
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception"), about 1 run in 10.
    del trainer
    gc.collect()
    dist.barrier()
    if dist.get_rank() == 0:
        print(f"FINAL project=ddp_rank_in_self world_size={dist.get_world_size()} epochs={total_epochs} loss={loss:.4f}",
              flush=True)
    destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description='simple distributed training job')
    parser.add_argument('--total_epochs', default=1, type=int, help='Total epochs to train the model')
    parser.add_argument('--batch_size', default=4, type=int, help='Input batch size on each device')
    args = parser.parse_args()
    main(args.total_epochs, args.batch_size)
