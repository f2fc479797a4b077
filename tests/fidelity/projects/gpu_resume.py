"""pytorch/examples ImageNet style: a trainer that resumes from `checkpoint.pth.tar` by default,
a checkpoint saved by an earlier run on a GPU (`torch.load(args.resume)`, no map_location), saves
one every epoch and reads the last one back with `map_location=lambda storage, loc: storage.cuda()`.

The harness writes the GPU run's checkpoint (`checkpoint_of_the_gpu_run()`, every storage tagged
"cuda:0") into the working directory. It cannot run unmodified on a CPU-only machine.
"""
import argparse
import math
import os

import torch
import torch.nn as nn


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)


def checkpoint_of_the_gpu_run():
    """What the earlier run saved after two epochs (built here on the CPU; the harness saves it
    as a GPU run would)."""
    model = make_model()
    optimizer = make_optimizer(model)
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    return {'epoch': 2, 'arch': 'mlp', 'state_dict': model.state_dict(), 'best_acc1': 0.25,
            'optimizer': optimizer.state_dict()}


def save_checkpoint(state, filename='checkpoint.pth.tar'):
    torch.save(state, filename)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--resume', default='checkpoint.pth.tar', type=str)
    parser.add_argument('--epochs', default=4, type=int)
    parser.add_argument('--gpu', default=None, type=int)
    args = parser.parse_args()

    model = make_model()
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    else:
        model = model.cuda()
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = make_optimizer(model)

    start_epoch = 0
    if os.path.isfile(args.resume):
        print("=> loading checkpoint '{}'".format(args.resume))
        if args.gpu is None:
            checkpoint = torch.load(args.resume)
        else:
            # Map model to be loaded to specified single gpu.
            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
        start_epoch = checkpoint['epoch']
        best_acc1 = checkpoint['best_acc1']
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))
    else:
        raise SystemExit("=> no checkpoint found at '{}'".format(args.resume))
    assert start_epoch == 2 and best_acc1 == 0.25
    assert optimizer.state_dict()['state'], "the momentum buffers come from the checkpoint"

    torch.manual_seed(1)
    inputs, targets = torch.randn(16, 8), torch.randint(0, 4, (16,))
    for epoch in range(start_epoch, args.epochs):
        images = inputs.cuda(args.gpu, non_blocking=True)
        target = targets.cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        save_checkpoint({'epoch': epoch + 1, 'arch': 'mlp', 'state_dict': model.state_dict(),
                         'best_acc1': best_acc1, 'optimizer': optimizer.state_dict()}, args.resume)

    last = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda())
    assert last['epoch'] == args.epochs, last['epoch']
    assert math.isfinite(loss.item())
    print(f"FINAL project=gpu_resume resumed_at={start_epoch} epochs={last['epoch']} loss={loss.item():.4f}")


if __name__ == '__main__':
    main()
