"""A detection trainer's launch, in ultralytics/yolov5 train.py style: LOCAL_RANK / RANK /
WORLD_SIZE read from the launcher's environment at import (-1 without one), --local_rank accepted
for the old torch.distributed.launch, and in DDP mode `assert torch.cuda.device_count() >
LOCAL_RANK, "insufficient CUDA devices for DDP command"`, set_device, init_process_group; the batch
divided by WORLD_SIZE, a DistributedSampler on the training loader, the model wrapped in DDP when
RANK != -1, and everything printed and saved (last.pt, best.pt, de-paralleled) on RANK -1 or 0.

Run: python local_rank_assert.py (one GPU), or
    torchrun --nproc_per_node 2 local_rank_assert.py (DDP)
It needs CUDA GPUs (and NCCL) as it is.

Unlike yolov5: a small synthetic set and an MLP in place of a detector, no shuffling.

Test hooks, off unless set (nothing else changes): PROJECT_SEEN_LOG and PROJECT_WEIGHTS name files,
".<pid>" appended (one per process), for the sample indices each training step took ("epoch i j
...") and the final weights (JSON).
"""
import argparse
import json
import os
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, distributed

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))  # https://pytorch.org/docs/stable/elastic/run.html
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))

SEEN_LOG = os.environ.get("PROJECT_SEEN_LOG")
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")


class SyntheticBoxes(Dataset):
    """A fixed synthetic set: 10 features to 4 box coordinates; an item is (features, box, its index)."""

    def __init__(self, size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.features = torch.randn(size, 10, generator=generator)
        self.boxes = torch.sigmoid(self.features[:, :4] + 0.5 * torch.randn(size, 4, generator=generator))

    def __len__(self):
        return len(self.features)

    def __getitem__(self, index):
        return self.features[index], self.boxes[index], index


def log_seen(epoch, index):
    if SEEN_LOG:
        with open(f"{SEEN_LOG}.{os.getpid()}", "a") as log:
            log.write(f"{epoch} {' '.join(str(i) for i in index.tolist())}\n")


def dump_weights(model):
    if WEIGHTS_OUT:
        weights = {name.removeprefix("module."): value.tolist() for name, value in model.state_dict().items()}
        with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
            json.dump(weights, out)


def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


def de_parallel(model):
    return model.module if is_parallel(model) else model


def select_device(device=""):
    cuda = device != "cpu" and torch.cuda.is_available()
    return torch.device("cuda:0" if cuda else "cpu")


def create_dataloader(dataset, batch_size, rank=-1, shuffle=False):
    batch_size = min(batch_size, len(dataset))
    sampler = None if rank == -1 else distributed.DistributedSampler(dataset, shuffle=shuffle)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle and sampler is None, sampler=sampler,
                      num_workers=0, pin_memory=True)


def train(opt, device):
    save_dir = Path(opt.save_dir)
    if RANK in {-1, 0}:
        save_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(opt.seed)
    model = nn.Sequential(nn.Linear(10, 16), nn.SiLU(), nn.Linear(16, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr, momentum=0.937, nesterov=True)
    if RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)

    train_loader = create_dataloader(SyntheticBoxes(48, seed=5), opt.batch_size // WORLD_SIZE, rank=LOCAL_RANK)
    val_loader = create_dataloader(SyntheticBoxes(16, seed=6), opt.batch_size * 2, rank=-1)
    criterion = nn.SmoothL1Loss()
    best_fitness = float("inf")
    for epoch in range(opt.epochs):
        model.train()
        if RANK != -1:
            train_loader.sampler.set_epoch(epoch)
        for i, (features, boxes, index) in enumerate(train_loader):
            features, boxes = features.to(device, non_blocking=True), boxes.to(device)
            loss = criterion(model(features), boxes)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            log_seen(epoch, index)
            if RANK in {-1, 0}:
                print(f"{epoch}/{opt.epochs - 1} batch {i} loss {loss.item():.5f}")

        if RANK in {-1, 0}:
            model.eval()
            with torch.no_grad():
                fitness = sum(criterion(de_parallel(model)(f.to(device)), b.to(device)).item() for f, b, _ in val_loader)
            ckpt = {"epoch": epoch, "best_fitness": min(best_fitness, fitness), "model": de_parallel(model).state_dict()}
            torch.save(ckpt, save_dir / "last.pt")
            if fitness < best_fitness:
                best_fitness = fitness
                torch.save(ckpt, save_dir / "best.pt")
            print(f"epoch {epoch} val {fitness:.5f}")

    dump_weights(model)
    if RANK in {-1, 0}:
        print(f"FINAL project=local_rank_assert world_size={WORLD_SIZE} best_fitness={best_fitness:.6f}", flush=True)


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2, help="total training epochs")
    parser.add_argument("--batch-size", type=int, default=8, help="total batch size for all GPUs")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--device", default="", help="cuda device, i.e. 0 or 0,1,2,3 or cpu")
    parser.add_argument("--save-dir", default="runs/train/exp", help="save to project/name")
    parser.add_argument("--seed", type=int, default=0, help="Global training seed")
    parser.add_argument("--local_rank", type=int, default=-1, help="Automatic DDP Multi-GPU argument, do not modify")
    return parser.parse_args()


def main(opt):
    device = select_device(opt.device)
    if LOCAL_RANK != -1:
        msg = "is not compatible with YOLOv5 Multi-GPU DDP training"
        assert opt.device != "cpu", f"--device cpu {msg}"
        assert opt.batch_size % WORLD_SIZE == 0, f"--batch-size {opt.batch_size} must be multiple of WORLD_SIZE"
        assert torch.cuda.device_count() > LOCAL_RANK, "insufficient CUDA devices for DDP command"
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        dist.init_process_group(backend="nccl" if dist.is_nccl_available() else "gloo", timeout=timedelta(seconds=10800))

    train(opt, device)
    if WORLD_SIZE > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(parse_opt())
