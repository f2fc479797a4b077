"""transfer_cuda written by hand for the CPU: the same model, data and steps; torch.amp with
autocast in bfloat16 exactly where the CPU computes it natively (the cpu target's rule), a
GradScaler."""
import argparse

import torch
import torch.nn as nn

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=24)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--lr", type=float, default=1e-2)


class ConvNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    model = ConvNet()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cpu")

    generator = torch.Generator().manual_seed(1)
    images = torch.randn(args.steps, args.batch_size, 3, 12, 12, generator=generator)
    labels = images.mean(dim=(3, 4))[..., :3].argmax(dim=-1)
    labels[images.std(dim=(2, 3, 4)) > 1.02] = 3

    model.train()
    for step in range(args.steps):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
            loss = criterion(model(images[step]), labels[step])
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"step {step} Loss {loss.item():.8f}")

    print(f"FINAL reference=transfer_cuda autocast={CPU_BF16} steps={args.steps} loss={loss.item():.8f}",
          flush=True)


if __name__ == "__main__":
    main()
