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
