import torch


def to_device(batch):
    if not batch.is_cpu:
        batch = batch.cpu()
    return batch


on_gpu = [t.is_cpu for t in tensors]
