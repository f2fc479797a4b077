import torch
import torch_npu


def to_device(batch):
    if not batch.is_npu:
        batch = batch.npu()
    return batch


on_gpu = [t.is_npu for t in tensors]
