import torch


def to_device(batch):
    if not batch.is_xpu:
        batch = batch.xpu()
    return batch


on_gpu = [t.is_xpu for t in tensors]
