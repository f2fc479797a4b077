"""Small CNN trained with the torch.amp API, timed with CUDA events.

Shows the current AMP recipe (torch.autocast("cuda", dtype=torch.float16) and
torch.amp.GradScaler("cuda")), cuDNN autotuning, and the usual benchmarking
helpers: CUDA events for timing, torch.cuda.synchronize(), peak-memory stats
and torch.cuda.empty_cache(). Like most benchmark scripts it simply assumes a
CUDA GPU is present.
"""
import argparse
import time

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def synthetic_batch(batch_size, num_classes=4, size=16):
    # The label is encoded in the mean brightness of the image, so the
    # network has something learnable without any real data.
    y = torch.randint(0, num_classes, (batch_size,))
    x = torch.randn(batch_size, 3, size, size) + (y.float() / num_classes).view(-1, 1, 1, 1)
    return x, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    args.warmup = min(args.warmup, args.steps - 1)

    torch.manual_seed(1234)
    cudnn.benchmark = True  # input shapes never change, so let cuDNN pick kernels
    print(f"GPU: {torch.cuda.get_device_name(0)}")

    model = SmallCNN().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")

    batches = [synthetic_batch(args.batch_size) for _ in range(args.steps)]

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    model.train()
    for step, (x, y) in enumerate(batches):
        if step == args.warmup:
            torch.cuda.synchronize()
            start.record()
            wall = time.perf_counter()
        x = x.to("cuda:0", non_blocking=True)
        y = y.to("cuda:0", non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    end.record()
    torch.cuda.synchronize()

    timed_steps = args.steps - args.warmup
    gpu_ms = start.elapsed_time(end)
    wall_ms = (time.perf_counter() - wall) * 1000
    peak_mb = torch.cuda.max_memory_allocated() / 2**20
    print(f"{timed_steps} steps: {gpu_ms / timed_steps:.2f} ms/step on the GPU, "
          f"{wall_ms / timed_steps:.2f} ms/step wall, peak memory {peak_mb:.1f} MiB")

    # Evaluate on the training batches, accumulating the counters on the GPU
    # to avoid a host sync per batch.
    model.eval()
    total_loss = torch.zeros(1, device="cuda")
    correct = torch.zeros(1, dtype=torch.long, device="cuda")
    with torch.no_grad():
        for x, y in batches:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                out = model(x)
            total_loss += F.cross_entropy(out.float(), y, reduction="sum")
            correct += (out.argmax(1) == y).sum()
    n = args.steps * args.batch_size
    torch.cuda.empty_cache()
    print(f"FINAL example=cnn_benchmark loss={total_loss.item() / n:.4f} "
          f"acc={correct.item() / n:.3f}")


if __name__ == "__main__":
    main()
