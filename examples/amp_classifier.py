"""Mixed-precision MLP classifier, written in the older torch.cuda.amp style.

Shows the classic pre-2.4 AMP recipe: torch.cuda.amp.autocast() around the
forward pass and torch.cuda.amp.GradScaler() for the backward pass, a
``--device cuda`` command-line option, and a pinned-memory DataLoader whose
batches are copied to the GPU with non_blocking=True.

Run it on a CUDA machine:

    python examples/amp_classifier.py --device cuda --epochs 2 --steps 20
"""
import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description="AMP classifier on synthetic clusters")
    parser.add_argument("--device", default="cuda", help="device to train on (default: cuda)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per epoch")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def make_dataset(n, num_features=32, num_classes=4, seed=0):
    # Gaussian blobs around random class centres; generated on the host, as a
    # real dataset would be, and moved to the GPU one batch at a time.
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(num_classes, num_features, generator=g) * 0.25
    labels = torch.randint(0, num_classes, (n,), generator=g)
    features = centres[labels] + torch.randn(n, num_features, generator=g)
    return TensorDataset(features, labels)


class MLP(nn.Module):
    def __init__(self, num_features=32, hidden=128, num_classes=4):
        super().__init__()
        self.fc1 = nn.Linear(num_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.head(x)


def main():
    args = parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    torch.backends.cudnn.benchmark = True

    device = torch.device(args.device)
    print(f"using device: {device}")

    dataset = make_dataset(args.batch_size * args.steps, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        pin_memory=True, num_workers=0, drop_last=True)

    model = MLP().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler()

    for epoch in range(args.epochs):
        model.train()
        running, seen = 0.0, 0
        for step, (x, y) in enumerate(loader):
            if step >= args.steps:
                break
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)

            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast():
                logits = model(x)
                loss = F.cross_entropy(logits, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            running += loss.item() * x.size(0)
            seen += x.size(0)
        print(f"epoch {epoch}: train loss {running / seen:.4f}")

    model.eval()
    correct = 0
    with torch.no_grad(), torch.cuda.amp.autocast():
        eval_loss = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            eval_loss += F.cross_entropy(logits.float(), y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
    eval_loss /= len(loader.dataset)
    acc = correct / len(loader.dataset)
    print(f"FINAL example=amp_classifier loss={eval_loss:.4f} acc={acc:.3f}")


if __name__ == "__main__":
    main()
