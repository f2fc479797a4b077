"""An ImageNet-style trainer as apex's examples of the amp era wrote them: every apex import in one
`try` (apex.parallel's DDP, fp16_utils by star, amp, multi_tensor_applier), amp.initialize before
apex.parallel.DistributedDataParallel, and the gradient norm logged through apex's fused
multi-tensor L2 norm where the extension is there (amp_C); LOCAL_RANK from the launcher:

    torchrun --standalone --nproc_per_node 2 multi_tensor_ddp.py

Needs apex (built with its CUDA extensions), NCCL and CUDA GPUs as it is.
"""
import argparse
import gc
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed

try:
    from apex.parallel import DistributedDataParallel as DDP
    from apex.fp16_utils import *
    from apex import amp
    from apex.multi_tensor_apply import multi_tensor_applier
except ImportError:
    raise ImportError("This example needs apex: https://www.github.com/nvidia/apex")

if multi_tensor_applier.available:
    import amp_C

parser = argparse.ArgumentParser(description='multi-tensor trainer')
parser.add_argument('--epochs', default=2, type=int)
parser.add_argument('-b', '--batch-size', default=8, type=int, help='mini-batch size per process')
parser.add_argument('--lr', default=0.2, type=float)
parser.add_argument("--local_rank", default=os.getenv('LOCAL_RANK', 0), type=int)
parser.add_argument('--opt-level', type=str, default='O1')


def grad_norm(parameters):
    """The L2 norm of all gradients together, as apex's LAMB computes it."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if multi_tensor_applier.available:
        overflow_buf = torch.cuda.IntTensor([0])
        norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)
        return norm.item()
    return torch.norm(torch.stack([torch.norm(g.float()) for g in grads])).item()


def main():
    args = parser.parse_args()
    distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    world_size = 1
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        world_size = dist.get_world_size()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    if distributed:
        model = DDP(model, delay_allreduce=True)
    criterion = nn.CrossEntropyLoss().cuda()

    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(96, 12, generator=generator)
    labels = inputs[:, :3].argmax(dim=1)
    dataset = torch.utils.data.TensorDataset(inputs, labels)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=(sampler is None),
                                         sampler=sampler)

    for epoch in range(args.epochs):
        if distributed:
            sampler.set_epoch(epoch)
        for i, (input, target) in enumerate(loader):
            input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
            loss = criterion(model(input), target)
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            norm = grad_norm(model.parameters())
            optimizer.step()
            reduced = loss.data.clone()
            if distributed:
                dist.all_reduce(reduced)
                reduced /= world_size
            if args.local_rank == 0 and i % 4 == 0:
                print(f'Epoch: [{epoch}][{i}/{len(loader)}] Loss {reduced.item():.6f} grad norm {norm:.6f}')

    if args.local_rank == 0:
        print(f'FINAL project=multi_tensor_ddp world_size={world_size} loss={reduced.item():.6f} '
              f'loss_grad_norm={norm:.6f}')
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del model
    gc.collect()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
