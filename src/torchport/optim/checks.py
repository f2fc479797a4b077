"""Validation shared by the fused optimizers: clear errors naming the problem."""

from __future__ import annotations

import math

import torch

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def check_param(p) -> None:
    if not isinstance(p, torch.Tensor):
        raise TypeError(f"fused optimizers take tensors, got {type(p).__name__}")
    if type(p) not in (torch.Tensor, torch.nn.Parameter):
        raise TypeError(
            f"fused optimizers do not support tensor subclasses ({type(p).__name__}): their storage "
            "cannot be re-pointed into a flat buffer; use the torch.optim optimizer for these")
    if p.layout != torch.strided:
        raise TypeError(f"fused optimizers need dense (strided) parameters, got {p.layout}")
    if p.dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"fused optimizers support float32, float16, bfloat16 and float64 parameters, got {p.dtype}")


def check_grad(g: torch.Tensor) -> None:
    """A gradient the flat buffer can take. (Its shape, dtype and device are the parameter's:
    torch's ``.grad`` setter and autograd guarantee that.)"""
    if g.layout != torch.strided:
        raise TypeError(
            "fused optimizers do not support sparse gradients (e.g. nn.Embedding(sparse=True)); "
            "use a dense embedding or torch.optim.SparseAdam for those parameters")
    if type(g) is not torch.Tensor:
        raise TypeError(f"fused optimizers do not support gradient subclasses ({type(g).__name__})")


def check_state_shapes(state: dict, param_groups: list[dict], keys_of) -> None:
    """Before a checkpoint is loaded: ValueError naming the first parameter whose state tensor has
    another shape than the parameter. Copied into a flat buffer, such a tensor would broadcast
    (a Linear(4, 1)'s moments loaded for a Linear(4, 3)) or fail half way through the load.
    ``keys_of(group)`` names the per-parameter state tensors (``exp_avg``, ...); ``step`` is
    not one of them."""
    index = 0  # the parameter's key in ``state_dict()["state"]``
    for gi, group in enumerate(param_groups):
        keys = keys_of(group)
        for i, p in enumerate(group["params"]):
            entry = state.get(p, {})
            for key in keys:
                value = entry.get(key)
                if torch.is_tensor(value) and value.shape != p.shape:
                    raise ValueError(
                        f"loaded state dict does not fit parameter {i} of param group {gi} "
                        f"(state index {index}): state {key!r} has shape "
                        f"{tuple(value.shape)} but the parameter has shape {tuple(p.shape)}; "
                        "nothing was loaded")
            index += 1


def scalar(value) -> float:
    """A hyperparameter as a Python float (a 0-dim tensor lr is accepted, as torch does)."""
    return float(value.item()) if torch.is_tensor(value) else float(value)


def check_range(name: str, value, low: float = 0.0, high: float | None = None,
                high_open: bool = True) -> None:
    """ValueError naming the hyperparameter when it is out of range."""
    v = scalar(value)
    if math.isnan(v) or v < low or (high is not None and (v >= high if high_open else v > high)):
        bound = f"[{low}, {high}{')' if high_open else ']'}" if high is not None else f">= {low}"
        raise ValueError(f"Invalid {name}: {value} (must be {bound})")


def check_betas(betas, names=("beta1", "beta2")) -> None:
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair of floats, got {betas!r}")
    for name, b in zip(names, betas):
        check_range(f"{name} parameter", b, 0.0, 1.0)
