"""The ImageNet example's launch (pytorch/examples imagenet/main.py): `--multiprocessing-distributed`
starts one process per GPU with mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node,
args)); each computes its global rank from the node's, joins the group through a tcp:// init_method,
splits the batch and the workers among the GPUs, and wraps the model in DDP(device_ids=[args.gpu]);
without it, DataParallel over all the GPUs, checkpoints saved from the wrapper (keys "module.").

Run as plain python: python spawn_trainer.py --multiprocessing-distributed --world-size 1 --rank 0
It cannot run unmodified on a CPU-only machine (no GPU: ngpus_per_node is 0, NCCL).
"""
import argparse
import gc
import math
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def find_free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


parser = argparse.ArgumentParser()
parser.add_argument("--world-size", default=-1, type=int, help="number of nodes")
parser.add_argument("--rank", default=-1, type=int, help="node rank")
parser.add_argument("--dist-url", default=None, type=str, help="url used to set up distributed training")
parser.add_argument("--dist-backend", default="nccl", type=str)
parser.add_argument("--gpu", default=None, type=int, help="GPU id to use")
parser.add_argument("--multiprocessing-distributed", action="store_true")
parser.add_argument("-b", "--batch-size", default=8, type=int)
parser.add_argument("-j", "--workers", default=2, type=int)
parser.add_argument("--steps", default=2, type=int)


def main():
    args = parser.parse_args()
    if args.dist_url is None:
        args.dist_url = f"tcp://127.0.0.1:{find_free_port()}"
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    assert ngpus_per_node > 0, "no GPU found"
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    if args.distributed:
        args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    if args.distributed:
        torch.cuda.set_device(args.gpu)
        model.cuda(args.gpu)
        args.batch_size = int(args.batch_size / ngpus_per_node)
        args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    else:
        model = torch.nn.DataParallel(model).cuda()
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        images = torch.randn(args.batch_size, 6).cuda(args.gpu, non_blocking=True)
        target = torch.randint(0, 3, (args.batch_size,)).cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert math.isfinite(loss.item())
    if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
        torch.save({"state_dict": model.state_dict()}, "checkpoint.pth.tar")
        keys = sorted(torch.load("checkpoint.pth.tar")["state_dict"])
        assert keys[0].startswith("module."), keys
        world = dist.get_world_size() if args.distributed else 1
        print(f"FINAL project=spawn_trainer distributed={args.distributed} world_size={world} "
              f"batch={args.batch_size} loss={loss.item():.4f}", flush=True)
    if args.distributed:
        del model, optimizer  # free DDP before the group goes (a gloo reducer dying at exit can abort)
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
