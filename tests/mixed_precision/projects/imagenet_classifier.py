"""An ImageNet-style classifier trainer (in the style of pytorch/examples' imagenet/main.py):
train() and validate() over a loader, gradient clipping, a checkpoint with the optimizer's state.
Random images stand in for the dataset; 2 epochs of 10 batches."""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser(description="classifier")
parser.add_argument("--epochs", default=2, type=int)
parser.add_argument("--lr", default=0.05, type=float)
parser.add_argument("--clip", default=1.0, type=float)
parser.add_argument("--out", default=".")


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def make_loader(batches, seed):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(8, 3, 16, 16, generator=generator), torch.randint(0, 10, (8,), generator=generator))
            for _ in range(batches)]


def train(train_loader, model, criterion, optimizer, epoch, args):
    model.train()
    for i, (images, target) in enumerate(train_loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        # compute output
        output = model(images)
        loss = criterion(output, target)

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        print(f"epoch {epoch} step {i} loss {loss.item():.6f}")


def validate(val_loader, model, criterion):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for images, target in val_loader:
            images = images.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            total += criterion(model(images), target).item()
    return total / len(val_loader)


def save_checkpoint(state, out):
    torch.save(state, os.path.join(out, "checkpoint.pth.tar"))


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    model = SmallNet().cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
    train_loader, val_loader = make_loader(10, 1), make_loader(2, 2)
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, args)
        val_loss = validate(val_loader, model, criterion)
        print(f"epoch {epoch} val {val_loss:.6f}")
        save_checkpoint({
            "epoch": epoch + 1,
            "state_dict": model.state_dict(),
            "optimizer": optimizer.state_dict(),
        }, args.out)


if __name__ == "__main__":
    main()
