"""Fused optimizers: torch.optim semantics, every parameter updated in a few kernel launches.

Parameters, gradients and optimizer state live in one flat buffer per (device, dtype) (see
:mod:`torchport.optim.flat`), so each step is a handful of ops per buffer instead of several per
parameter, on any device. The ``NpuFused*`` names of ``torch_npu.optim`` are aliases, so scripts
tuned for Ascend run anywhere; where torch_npu's math deviates from the reference it was modelled
on, these classes follow the reference (see each class's docstring).

Importing this package imports torch; ``import torchport`` does not.
"""

from .adam import FusedAdam, FusedAdamW
from .flat import FlatOptimizer
from .sgd import FusedSGD

NpuFusedAdam = FusedAdam
NpuFusedAdamW = FusedAdamW
NpuFusedSGD = FusedSGD

__all__ = [
    "FlatOptimizer", "FusedAdam", "FusedAdamW", "FusedSGD",
    "NpuFusedAdam", "NpuFusedAdamW", "NpuFusedSGD",
]
