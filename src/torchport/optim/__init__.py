"""Fused optimizers: torch.optim semantics, every parameter updated in a few kernel launches.

Parameters, gradients and optimizer state live in one flat buffer per (device, dtype) (see
:mod:`torchport.optim.flat`), so each step is a handful of ops per buffer instead of several per
parameter, on any device. The ``NpuFused*`` names of ``torch_npu.optim`` are here too, so scripts
tuned for Ascend run anywhere: aliases, except :class:`NpuFusedLamb`, which keeps torch_npu's
signature and its model, cybertronai's LAMB (``FusedLamb`` is timm's). Where torch_npu's math
deviates from the reference it was modelled on, these classes follow the reference (see each
class's docstring).

Importing this package imports torch; ``import torchport`` does not.
"""

from .adadelta import FusedAdadelta
from .adam import FusedAdam, FusedAdamW
from .adamp import FusedAdamP
from .bert_adam import FusedBertAdam
from .flat import FlatOptimizer
from .lamb import FusedLamb
from .npu_lamb import NpuFusedLamb
from .rmsprop import FusedRMSprop
from .rmsprop_tf import FusedRMSpropTF
from .sgd import FusedSGD

NpuFusedSGD = FusedSGD
NpuFusedAdam = FusedAdam
NpuFusedAdamW = FusedAdamW
NpuFusedAdadelta = FusedAdadelta
NpuFusedAdamP = FusedAdamP
NpuFusedBertAdam = FusedBertAdam
NpuFusedRMSprop = FusedRMSprop
NpuFusedRMSpropTF = FusedRMSpropTF

__all__ = [
    "FlatOptimizer",
    "FusedSGD", "FusedAdam", "FusedAdamW", "FusedAdadelta", "FusedLamb", "FusedAdamP",
    "FusedBertAdam", "FusedRMSprop", "FusedRMSpropTF",
    "NpuFusedSGD", "NpuFusedAdam", "NpuFusedAdamW", "NpuFusedAdadelta", "NpuFusedLamb",
    "NpuFusedAdamP", "NpuFusedBertAdam", "NpuFusedRMSprop", "NpuFusedRMSpropTF",
]
