"""pytorch/examples mnist style: a CPU fallback, with GPU-only calls inside the GPU branch.

Unmodified on a CPU-only machine (with or without --no-cuda): python cpu_fallback_pinned.py --no-cuda
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.fc1 = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc1(x), dim=1)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))
    return loss.item()


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST-like Example')
    parser.add_argument('--batch-size', type=int, default=8, metavar='N')
    parser.add_argument('--epochs', type=int, default=1, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=1, metavar='N')
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()

    torch.manual_seed(args.seed)

    device = torch.device("cuda" if use_cuda else "cpu")

    kwargs = {'num_workers': 0, 'pin_memory': True} if use_cuda else {}
    if use_cuda:
        torch.backends.cudnn.benchmark = True
        props = torch.cuda.get_device_properties(0)
        print('GPU: {} ({:.1f} GiB)'.format(torch.cuda.get_device_name(0), props.total_memory / 1024 ** 3))

    dataset = TensorDataset(torch.randn(24, 1, 8, 8), torch.randint(0, 10, (24,)))
    train_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, **kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        loss = train(args, model, device, train_loader, optimizer, epoch)
        scheduler.step()

    if use_cuda:
        print('memory allocated: {:.2f} MiB'.format(torch.cuda.memory_allocated() / 1024 ** 2))
    assert math.isfinite(loss)
    print('FINAL project=cpu_fallback_pinned use_cuda={} epochs={} loss={:.4f}'.format(use_cuda, args.epochs, loss))


if __name__ == '__main__':
    main()
