"""Quickstart-style denoising autoencoder that falls back to the CPU.

Shows the most common device idiom in tutorials and small repos:
device = torch.device("cuda" if torch.cuda.is_available() else "cpu"), with
everything moved via .to(device) and memory pinning switched on only when a
CUDA GPU is there. Plain fp32 training, no AMP.
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class AutoEncoder(nn.Module):
    def __init__(self, dim=48, bottleneck=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, 32), nn.Tanh(), nn.Linear(32, bottleneck))
        self.decoder = nn.Sequential(nn.Linear(bottleneck, 32), nn.Tanh(), nn.Linear(32, dim))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def low_rank_data(n, dim=48, rank=6, seed=0):
    # Points on a random 6-dimensional subspace: an 8-unit bottleneck can
    # reconstruct them, so the loss should fall well below the data variance.
    g = torch.Generator().manual_seed(seed)
    basis = torch.randn(rank, dim, generator=g) / rank ** 0.5
    return torch.randn(n, rank, generator=g) @ basis


def train_one_epoch(model, loader, optimizer, device, max_steps, noise=0.1):
    model.train()
    loss_fn = nn.MSELoss()
    total, count = 0.0, 0
    for step, (clean,) in enumerate(loader):
        if step >= max_steps:
            break
        clean = clean.to(device)
        noisy = clean + noise * torch.randn_like(clean)
        loss = loss_fn(model(noisy), clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        count += 1
    return total / max(count, 1)


def main():
    parser = argparse.ArgumentParser(description="denoising autoencoder quickstart")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"Using {device} device")

    data = low_rank_data(args.steps * args.batch_size, seed=args.seed)
    loader = DataLoader(TensorDataset(data), batch_size=args.batch_size, shuffle=True,
                        pin_memory=torch.cuda.is_available())

    model = AutoEncoder().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    for epoch in range(args.epochs):
        loss = train_one_epoch(model, loader, optimizer, device, args.steps)
        print(f"epoch {epoch + 1}/{args.epochs}  loss {loss:.4f}")

    model.eval()
    with torch.no_grad():
        data = data.to(device)
        recon_loss = nn.functional.mse_loss(model(data), data).item()
    print(f"FINAL example=autoencoder_quickstart loss={recon_loss:.4f}")


if __name__ == "__main__":
    main()
