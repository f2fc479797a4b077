"""A single-card trainer in pytorch/examples' mnist/main.py style: train(args, model, device,
train_loader, optimizer, epoch) and test(model, device, test_loader), the loaders' arguments in
train_kwargs / test_kwargs dicts with cuda_kwargs (workers, pinned memory, shuffling) added on the
GPU, Adadelta with StepLR, --save-model writing mnist_cnn.pt.

Run: python mnist_single.py [--save-model]. Without a GPU (or with --no-cuda) it trains on the CPU,
without the loaders' cuda_kwargs.

Unlike the example: a small synthetic 28x28 set in place of the MNIST download, and a two-layer
MLP without dropout (so that every process computes the same thing).

Test hooks, off unless set (nothing else changes): PROJECT_SEEN_LOG and PROJECT_WEIGHTS name files,
".<pid>" appended (one per process), for the sample indices each training step took ("epoch i j
...") and the final weights (JSON).
"""
import argparse
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR

SEEN_LOG = os.environ.get("PROJECT_SEEN_LOG")
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")


class SyntheticDigits(torch.utils.data.Dataset):
    """A fixed synthetic 10-class set of 1x28x28 images; an item is (image, label, its index)."""

    def __init__(self, size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.data = torch.rand(size, 1, 28, 28, generator=generator)
        self.targets = torch.randint(0, 10, (size,), generator=generator)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return (self.data[index] - 0.1307) / 0.3081, self.targets[index], index


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def log_seen(epoch, index):
    if SEEN_LOG:
        with open(f"{SEEN_LOG}.{os.getpid()}", "a") as log:
            log.write(f"{epoch} {' '.join(str(i) for i in index.tolist())}\n")


def dump_weights(model):
    if WEIGHTS_OUT:
        weights = {name.removeprefix("module."): value.tolist() for name, value in model.state_dict().items()}
        with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
            json.dump(weights, out)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target, index) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        log_seen(epoch, index)
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target, _ in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss


def main():
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST-style Example')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N',
                        help='input batch size for training (default: 16)')
    parser.add_argument('--test-batch-size', type=int, default=32, metavar='N',
                        help='input batch size for testing (default: 32)')
    parser.add_argument('--epochs', type=int, default=2, metavar='N',
                        help='number of epochs to train (default: 2)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='Learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=2, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='For Saving the current Model')
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()

    torch.manual_seed(args.seed)

    device = torch.device("cuda" if use_cuda else "cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    dataset1 = SyntheticDigits(64, seed=11)
    dataset2 = SyntheticDigits(32, seed=12)
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test_loss = test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")

    dump_weights(model)
    print(f"FINAL project=mnist_single epochs={args.epochs} test_loss={test_loss:.6f}")


if __name__ == '__main__':
    main()
