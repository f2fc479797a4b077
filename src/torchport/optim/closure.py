"""The loss an optimizer's `step(closure)` returns, shared by the optimizers here and by the
stand-ins' own (apex's FusedNovoGrad, bitsandbytes' Lion)."""

from __future__ import annotations

from typing import Callable

import torch


def closure_loss(closure: Callable | None):
    """`closure()`, with gradients on (`step` runs under ``torch.no_grad``), or None without a closure."""
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()
