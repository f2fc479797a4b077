import torch


def to_device(batch):
    if not batch.is_cuda:
        batch = batch.cuda()
    return batch


on_gpu = [t.is_cuda for t in tensors]
