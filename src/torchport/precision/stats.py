"""A tensor as a dump keeps it: statistics, and an evenly strided sample of its elements (the
same elements in every run of the same shape, so that two samples compare element by element)."""

from __future__ import annotations

import math

from torchport.targets.devices import HOST_DEVICE_TYPE

SAMPLE = 512  # elements kept per tensor: enough for cosine and error shares, small on disk


def is_recorded(value) -> bool:
    """A floating-point tensor with elements whose values can be read: dense, not on the meta device,
    not one of torch.func's wrappers (inside grad or vmap)."""
    import torch

    return isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 0 \
        and value.layout == torch.strided and not value.is_meta \
        and not torch._C._functorch.is_functorch_wrapped_tensor(value)


def summary(tensor) -> tuple[dict, "torch.Tensor"]:
    """(the statistics of `tensor`, its float32 sample on the CPU)."""
    import torch

    flat = tensor.detach().reshape(-1)
    wide = flat.float()
    # Three passes where every element is finite (the common case): min and max, the sum, and the
    # norm as the square root of a dot product (BLAS: faster than vector_norm on the CPU).
    low, high = torch.aminmax(wide)
    values = torch.stack([low, high, wide.sum(), wide.dot(wide).sqrt()]).tolist()
    nan = inf = 0
    count = wide.numel()
    if not all(math.isfinite(value) for value in values):
        nan, inf = torch.stack([torch.isnan(wide).sum(), torch.isinf(wide).sum()]).tolist()
        finite = wide[torch.isfinite(wide)]
        count = finite.numel()
        values = torch.stack([finite.min(), finite.max(), finite.sum(), torch.linalg.vector_norm(finite)]).tolist() \
            if finite.numel() else [None] * 4
    low, high, total, norm = values
    mean = total / count if total is not None else None
    sample = sampled(wide).to(HOST_DEVICE_TYPE, copy=True)
    stats = {"shape": list(tensor.shape), "dtype": str(tensor.dtype).replace("torch.", ""),
             "device": tensor.device.type, "min": low, "max": high, "mean": mean, "norm": norm,
             "nan": int(nan), "inf": int(inf)}
    return stats, sample


def sampled(flat) -> "torch.Tensor":
    """The sample of a flat tensor, as float32: every (numel // SAMPLE)th element, SAMPLE at most."""
    stride = max(1, flat.numel() // SAMPLE)
    return flat[::stride][:SAMPLE].float()
