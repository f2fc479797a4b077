import torch


def to_device(batch):
    if not batch.is_mps:
        batch = batch.to("mps")
    return batch


on_gpu = [t.is_mps for t in tensors]
