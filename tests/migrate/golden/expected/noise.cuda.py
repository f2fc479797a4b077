"""What public projects write that a rewrite could turn into noise (issue #20, item 5)."""
import argparse
import random

import torch
import torch.nn as nn
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument('--device', default='cuda', help='device to use (cuda or cpu)')
parser.add_argument('--sync-bn', action='store_true', help='use SyncBatchNorm (CUDA only)')
args = parser.parse_args()


def init_seeds(seed=0):
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def device_report(i=0):
    p = torch.cuda.get_device_properties(i)
    return f"CUDA:{i} ({p.name}, {p.total_memory / (1 << 20):.0f}MiB)"


init_seeds(1)
model = torchvision.models.resnet18()
if args.sync_bn:
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = model.to(args.device)
try:
    loss = model(torch.randn(2, 3, 32, 32, device=args.device)).sum()
except torch.cuda.OutOfMemoryError:
    loss = None
torch.cuda.synchronize() if torch.cuda.is_available() else None
mem = f"{torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0:.3g}G"
peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0
print(device_report(), mem, peak)
