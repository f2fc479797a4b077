"""A CUDA training script moved to the NPU ModelZoo's other way: `import torch_npu` and
`from torch_npu.contrib import transfer_to_npu` first, the rest left as it was written for CUDA
(`.cuda()`, "cuda:0", torch.cuda.amp, torch.cuda.synchronize, cudnn flags): transfer_to_npu
redirects every CUDA call to the NPU at import. A small conv net on synthetic images, AdamW.

Run on Ascend: python transfer_cuda.py
It needs torch_npu (CANN and an Ascend NPU) as it is.
"""
import argparse
import time

import torch
import torch_npu
from torch_npu.contrib import transfer_to_npu
import torch.nn as nn

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
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)

    torch.manual_seed(0)
    model = ConvNet().cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scaler = torch.cuda.amp.GradScaler()

    generator = torch.Generator().manual_seed(1)
    images = torch.randn(args.steps, args.batch_size, 3, 12, 12, generator=generator)
    labels = images.mean(dim=(3, 4))[..., :3].argmax(dim=-1)  # the brightest of three channels, or ...
    labels[images.std(dim=(2, 3, 4)) > 1.02] = 3               # ... a fourth class for the noisiest

    model.train()
    for step in range(args.steps):
        start = time.time()
        input = images[step].to(device, non_blocking=True)
        target = labels[step].cuda(non_blocking=True)
        with torch.cuda.amp.autocast():
            output = model(input)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        torch.cuda.synchronize()
        print(f"step {step} Loss {loss.item():.8f} time {time.time() - start:.3f}")

    print(f"FINAL project=transfer_cuda steps={args.steps} loss={loss.item():.8f}", flush=True)


if __name__ == "__main__":
    main()
