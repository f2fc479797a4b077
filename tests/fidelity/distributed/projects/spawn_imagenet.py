"""An mp.spawn trainer in pytorch/examples' imagenet/main.py style: main() spawns
main_worker(gpu, ngpus_per_node, args) once per GPU with --multiprocessing-distributed, each worker
joins the group by --dist-url (tcp://), divides the batch by ngpus_per_node, trains a DDP model on
its DistributedSampler share, and the worker of rank 0 of each node saves save_checkpoint()'s
checkpoint.pth.tar / model_best.pth.tar.

As that example's README runs it on one node:
    python spawn_imagenet.py --dist-url tcp://127.0.0.1:FREEPORT --multiprocessing-distributed --world-size 1 --rank 0
It needs CUDA GPUs (and NCCL) as it is.

Unlike the example: synthetic data and a small MLP in place of ImageNet and a ResNet; the seed is
set in main_worker (a spawned process does not inherit the parent's); the sampler does not
shuffle; progress is printed by the process that saves, not by every process.

Test hooks, off unless set (nothing else changes): PROJECT_SEEN_LOG and PROJECT_WEIGHTS name files,
".<pid>" appended (one per process), for the sample indices each training step took ("epoch i j
...") and the final weights (JSON).
"""
import gc
import argparse
import json
import os
import random
import shutil

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed

SEEN_LOG = os.environ.get("PROJECT_SEEN_LOG")
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")

parser = argparse.ArgumentParser(description="PyTorch ImageNet-style Training")
parser.add_argument("--epochs", default=2, type=int, metavar="N", help="number of total epochs to run")
parser.add_argument("-b", "--batch-size", default=8, type=int, metavar="N",
                    help="mini-batch size, the total batch size of all GPUs on the current node "
                         "when using Data Parallel or Distributed Data Parallel")
parser.add_argument("--lr", "--learning-rate", default=0.05, type=float, metavar="LR", dest="lr")
parser.add_argument("--momentum", default=0.9, type=float, metavar="M")
parser.add_argument("-p", "--print-freq", default=2, type=int, metavar="N")
parser.add_argument("--world-size", default=-1, type=int, help="number of nodes for distributed training")
parser.add_argument("--rank", default=-1, type=int, help="node rank for distributed training")
parser.add_argument("--dist-url", default="tcp://224.66.41.62:23456", type=str,
                    help="url used to set up distributed training")
parser.add_argument("--dist-backend", default="nccl", type=str, help="distributed backend")
parser.add_argument("--seed", default=42, type=int, help="seed for initializing training.")
parser.add_argument("--gpu", default=None, type=int, help="GPU id to use.")
parser.add_argument("--multiprocessing-distributed", action="store_true",
                    help="Use multi-processing distributed training to launch N processes per node, "
                         "which has N GPUs.")

best_loss = float("inf")


class SyntheticImages(torch.utils.data.Dataset):
    """A fixed synthetic 4-class set of 2x4x4 'images'; an item is (image, label, its index)."""

    def __init__(self, size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.images = torch.randn(size, 2, 4, 4, generator=generator)
        self.labels = torch.randint(0, 4, (size,), generator=generator)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.images[index], self.labels[index], index


def log_seen(epoch, index):
    if SEEN_LOG:
        with open(f"{SEEN_LOG}.{os.getpid()}", "a") as log:
            log.write(f"{epoch} {' '.join(str(i) for i in index.tolist())}\n")


def dump_weights(model):
    if WEIGHTS_OUT:
        weights = {name.removeprefix("module."): value.tolist() for name, value in model.state_dict().items()}
        with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
            json.dump(weights, out)


def main():
    args = parser.parse_args()

    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        cudnn.deterministic = True
        cudnn.benchmark = False

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed

    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        args.world_size = ngpus_per_node * args.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        # Simply call main_worker function
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    global best_loss
    args.gpu = gpu
    torch.manual_seed(args.seed)

    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    leader = not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0

    model = nn.Sequential(nn.Flatten(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))
    if args.distributed:
        # For multiprocessing distributed, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            args.batch_size = int(args.batch_size / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model.cuda()
            model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    else:
        model = torch.nn.DataParallel(model).cuda()

    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)

    train_dataset = SyntheticImages(48, seed=1)
    val_dataset = SyntheticImages(16, seed=2)
    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=False)
    else:
        train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=0, pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False, num_workers=0, pin_memory=True)

    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train(train_loader, model, criterion, optimizer, epoch, leader, args)
        loss = validate(val_loader, model, criterion, args)

        is_best = loss < best_loss
        best_loss = min(loss, best_loss)
        if leader:
            print(f" * Epoch {epoch} validation loss {loss:.4f}")
            save_checkpoint({
                "epoch": epoch + 1,
                "state_dict": model.state_dict(),
                "best_loss": best_loss,
                "optimizer": optimizer.state_dict(),
            }, is_best)

    dump_weights(model)
    if leader:
        print(f"FINAL project=spawn_imagenet world_size={args.world_size} best_loss={best_loss:.6f}", flush=True)
    del model  # (DDP freed before its group goes: gloo may abort at exit otherwise)
    gc.collect()
    if args.distributed:
        dist.destroy_process_group()


def train(train_loader, model, criterion, optimizer, epoch, leader, args):
    model.train()
    for i, (images, target, index) in enumerate(train_loader):
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
        target = target.cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_seen(epoch, index)
        if leader and i % args.print_freq == 0:
            print(f"Epoch: [{epoch}][{i}/{len(train_loader)}]\tLoss {loss.item():.4e}")


def validate(val_loader, model, criterion, args):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for images, target, _ in val_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            target = target.cuda(args.gpu, non_blocking=True)
            total += criterion(model(images), target).item() * len(target)
            count += len(target)
    return total / count


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


if __name__ == "__main__":
    main()
