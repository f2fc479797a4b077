"""A single-card trainer in the MNIST example's shape: a main(), a device, a checkpoint saved and
read back for a last evaluation."""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def train(model, device, batches, optimizer, epoch):
    model.train()
    for i, (x, y) in enumerate(batches):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} batch {i} loss {loss.item():.6f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda:0")
    model = Net().to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(4)]
    for epoch in range(args.epochs):
        train(model, device, batches, optimizer, epoch)
    torch.save(model.state_dict(), "net.pt")
    model.load_state_dict(torch.load("net.pt"))
    print("FINAL", " ".join(f"{v:.6f}" for v in model.fc2.weight.flatten().tolist()))


if __name__ == "__main__":
    main()
