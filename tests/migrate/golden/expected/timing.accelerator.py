import time

import torch


def timed(step):
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    start = time.perf_counter()
    step()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    end = time.perf_counter()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    return (end - start) * 1000
