"""A DataParallel trainer: the model wrapped in nn.DataParallel when the machine has more than one
GPU (the PyTorch data-parallel tutorial's `if torch.cuda.device_count() > 1:`), its weights saved
through `.module` (huggingface/transformers' legacy example trainers: `model_to_save = model.module
if hasattr(model, "module") else model  # Take care of distributed/parallel training`).

Run: python dataparallel_trainer.py. It needs a CUDA GPU as it is.

Test hooks, off unless set (nothing else changes): PROJECT_SEEN_LOG and PROJECT_WEIGHTS name files,
".<pid>" appended (one per process), for the sample indices each training step took ("epoch i j
...") and the final weights (JSON).
"""
import argparse
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SEEN_LOG = os.environ.get("PROJECT_SEEN_LOG")
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")


class RandomRegression(Dataset):
    """A fixed synthetic regression set; an item is (features, target, its index)."""

    def __init__(self, size=48, features=8, seed=1234):
        generator = torch.Generator().manual_seed(seed)
        self.x = torch.randn(size, features, generator=generator)
        self.y = self.x @ torch.randn(features, 1, generator=generator) + 0.1 * torch.randn(size, 1, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index], index


class MLP(nn.Module):
    def __init__(self, features=8, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


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
    parser = argparse.ArgumentParser(description="DataParallel regression trainer")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--logging-steps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output-dir", default="output")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    model = MLP().to(device)
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
        model = nn.DataParallel(model)

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    criterion = nn.MSELoss()
    train_loader = DataLoader(RandomRegression(), batch_size=args.train_batch_size, shuffle=False)

    global_step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, y, index in train_loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            log_seen(epoch, index)
            global_step += 1
            if global_step % args.logging_steps == 0:
                print(f"epoch {epoch} step {global_step} loss {loss.item():.6f}")

        os.makedirs(args.output_dir, exist_ok=True)
        model_to_save = model.module if hasattr(model, "module") else model  # Take care of distributed/parallel training
        torch.save(model_to_save.state_dict(), os.path.join(args.output_dir, "pytorch_model.bin"))

    dump_weights(model)
    print(f"FINAL project=dataparallel_trainer steps={global_step} loss={loss.item():.6f}")


if __name__ == "__main__":
    main()
