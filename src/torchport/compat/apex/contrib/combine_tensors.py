"""Ascend apex's apex.contrib.combine_tensors: several tensors made views of one flat buffer, so
that one elementwise op updates them all (ModelZoo's hand-written NpuFused optimizers use it).

Ascend's combine_npu points each tensor's data into a new flat NPU buffer (its C++
change_data_ptr) and copies the values there; here `Tensor.set_` does the same on any device.
Ascend pads each part to its NPU storage alignment; the flat buffer here has no padding, and
get_part_combined_tensor takes an index and a size in it as Ascend's does.
"""

from __future__ import annotations

import torch

from torchport.compat.apex import _log


def combine_npu(list_of_tensor, require_copy_value=True):
    """One flat buffer of the tensors' dtype and device; each tensor becomes a view into it (its
    values kept where `require_copy_value`). None where the tensors hold nothing."""
    _log.adapted("apex.contrib.combine_tensors.combine_npu", "torch.Tensor.set_", "one flat buffer, on any device")
    total = sum(tensor.numel() for tensor in list_of_tensor)
    if total == 0:
        return None
    first = list_of_tensor[0]
    combined = torch.zeros(total, dtype=first.dtype, device=first.device)
    offset = 0
    with torch.no_grad():
        for tensor in list_of_tensor:
            values = tensor.clone() if require_copy_value else None
            tensor.set_(combined.untyped_storage(), offset, tensor.size())
            if values is not None:
                tensor.copy_(values)
            offset += tensor.numel()
    return combined


def get_part_combined_tensor(combined_tensor, index, size):
    """`size` elements of the flat buffer from `index` (a view); None where there are none."""
    if combined_tensor is None or size == 0:
        return None
    if index + size > combined_tensor.numel():
        raise RuntimeError(f"get_part_combined_tensor: {index} + {size} is past the buffer's {combined_tensor.numel()} elements")
    return combined_tensor[index:index + size]


def is_combined_tensor_valid(combined_tensor, list_of_tensor):
    """Whether every tensor is still a view into the flat buffer."""
    if combined_tensor is None or not list_of_tensor:
        return False
    storage = combined_tensor.untyped_storage().data_ptr()
    return all(tensor.untyped_storage().data_ptr() == storage for tensor in list_of_tensor)
