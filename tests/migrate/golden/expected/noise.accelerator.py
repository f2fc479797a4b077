"""What public projects write that a rewrite could turn into noise (issue #20, item 5)."""
import argparse
import os
import platform
import random
import types

import torch
import torch.nn as nn
import torchvision
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def host_properties():
    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""
    if os.name == "nt":  # Windows
        import ctypes

        kilobytes = ctypes.c_ulonglong()
        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))
        memory = kilobytes.value * 1024
    else:  # Linux, macOS
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,
                                 total_memory=memory, multi_processor_count=os.cpu_count(),
                                 uuid=f"host-{platform.node()}")


parser = argparse.ArgumentParser()
parser.add_argument('--device', default=DEVICE_TYPE, help='device to use (cuda or cpu)')
parser.add_argument('--sync-bn', action='store_true', help='use SyncBatchNorm (CUDA only)')
args = parser.parse_args()


def init_seeds(seed=0):
    random.seed(seed)
    torch.manual_seed(seed)


def device_report(i=0):
    p = (torch.get_device_module(DEVICE_TYPE).get_device_properties(i) if torch.accelerator.is_available() else host_properties())
    return f"CUDA:{i} ({p.name}, {p.total_memory / (1 << 20):.0f}MiB)"


init_seeds(1)
model = torchvision.models.resnet18()
if args.sync_bn:
    model = (nn.SyncBatchNorm.convert_sync_batchnorm(model) if torch.accelerator.is_available() else model)
model = model.to(args.device)
try:
    loss = model(torch.randn(2, 3, 32, 32, device=args.device)).sum()
except torch.OutOfMemoryError:
    loss = None
torch.accelerator.synchronize() if torch.accelerator.is_available() else None
mem = f"{torch.accelerator.memory_reserved() / 1E9 if torch.accelerator.is_available() else 0:.3g}G"
peak = torch.accelerator.max_memory_allocated() / 2**30 if torch.accelerator.is_available() else 0
print(device_report(), mem, peak)
