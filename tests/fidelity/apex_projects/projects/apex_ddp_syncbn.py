"""apex's imagenet example (examples/imagenet/main_amp.py) in small: synced BatchNorm through
`apex.parallel.convert_syncbn_model`, `amp.initialize` with the options from the command line,
then `apex.parallel.DistributedDataParallel`; LOCAL_RANK from the launcher, one process per GPU:

    torchrun --standalone --nproc_per_node 2 apex_ddp_syncbn.py --sync_bn

Needs apex, NCCL and CUDA GPUs as it is.
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
    from apex import amp
    import apex
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to run this example.")

parser = argparse.ArgumentParser(description='PyTorch ImageNet Training')
parser.add_argument('--epochs', default=2, type=int)
parser.add_argument('-b', '--batch-size', default=8, type=int, help='mini-batch size per process')
parser.add_argument('--lr', '--learning-rate', default=0.3, type=float)
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--weight-decay', '--wd', default=1e-4, type=float)
parser.add_argument("--local_rank", default=os.getenv('LOCAL_RANK', 0), type=int)
parser.add_argument('--sync_bn', action='store_true', help='enabling apex sync BN.')
parser.add_argument('--opt-level', type=str, default='O1')
parser.add_argument('--keep-batchnorm-fp32', type=str, default=None)
parser.add_argument('--loss-scale', type=str, default=None)


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def reduce_tensor(tensor):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= args.world_size
    return rt


def main():
    global args
    args = parser.parse_args()

    args.distributed = False
    if 'WORLD_SIZE' in os.environ:
        args.distributed = int(os.environ['WORLD_SIZE']) > 1

    args.gpu = 0
    args.world_size = 1
    if args.distributed:
        args.gpu = args.local_rank
        torch.cuda.set_device(args.gpu)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        args.world_size = torch.distributed.get_world_size()

    torch.manual_seed(0)
    model = Net()
    if args.sync_bn:
        if args.local_rank == 0:
            print("using apex synced BN")
        model = apex.parallel.convert_syncbn_model(model)
    model = model.cuda()

    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,
                                      keep_batchnorm_fp32=args.keep_batchnorm_fp32, loss_scale=args.loss_scale)
    if args.distributed:
        # delay_allreduce delays all communication to the end of the backward pass.
        model = DDP(model, delay_allreduce=True)

    criterion = nn.CrossEntropyLoss().cuda()

    generator = torch.Generator().manual_seed(0)
    images = torch.randn(64, 3, 8, 8, generator=generator)
    labels = images[:, :, :4, :4].mean(dim=(2, 3)).argmax(dim=1)  # the brightest channel of a corner
    train_dataset = torch.utils.data.TensorDataset(images, labels)
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
                                               shuffle=(train_sampler is None), sampler=train_sampler)

    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        for i, (input, target) in enumerate(train_loader):
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            output = model(input)
            loss = criterion(output, target)

            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()

            reduced_loss = reduce_tensor(loss.data) if args.distributed else loss.data
            if args.local_rank == 0:
                print(f'Epoch: [{epoch}][{i}/{len(train_loader)}] Loss {reduced_loss.item():.6f}')

    if args.local_rank == 0:
        print(f'FINAL project=apex_ddp_syncbn world_size={args.world_size} loss={reduced_loss.item():.6f}')
    # Free DDP before the group goes: its reducer, left to die at interpreter exit, sometimes aborts
    # the process under gloo ("terminate called without an active exception").
    del model
    gc.collect()
    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
