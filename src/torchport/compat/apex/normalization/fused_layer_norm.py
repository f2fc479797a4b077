"""apex.normalization's layers as torch's LayerNorm and RMSNorm (same parameters, same state_dict
keys), with apex's defaults: eps 1e-5 for both (torch's RMSNorm would take the dtype's epsilon).

apex's fused kernels run a norm in the autocast dtype; torch's autocast runs layer_norm in float32
(more precise, not less). The Mixed* layers return the parameters' dtype, as torch's do."""

from __future__ import annotations

import torch

from torchport.apis import apex as facts
from torchport.compat.apex import _log, _replace

PREFIX = "apex.normalization"


def _note(name: str) -> None:
    _log.same(f"{PREFIX}.{name}", facts.NORMALIZATION[f"{PREFIX}.{name}"].native)


def _arguments(name: str, given: dict) -> dict:
    return _replace.native_arguments(facts.NORMALIZATION[f"{PREFIX}.{name}"], given)


class FusedLayerNorm(torch.nn.LayerNorm):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, memory_efficient=False):
        _note(type(self).__name__)
        super().__init__(**_arguments("FusedLayerNorm", dict(normalized_shape=normalized_shape, eps=eps,
                                                             elementwise_affine=elementwise_affine)))
        self.memory_efficient = memory_efficient


class FusedRMSNorm(torch.nn.RMSNorm):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, memory_efficient=False):
        _note(type(self).__name__)
        super().__init__(**_arguments("FusedRMSNorm", dict(normalized_shape=normalized_shape, eps=eps,
                                                           elementwise_affine=elementwise_affine)))
        self.memory_efficient = memory_efficient


def _affine_only(name: str, kwargs: dict) -> None:
    if not kwargs.pop("elementwise_affine", True):
        raise RuntimeError(f"{name} does not support `elementwise_affine = False`")
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments: {', '.join(kwargs)}")


class MixedFusedLayerNorm(FusedLayerNorm):
    def __init__(self, normalized_shape, eps=1e-5, *, memory_efficient=False, **kwargs):
        _affine_only("MixedFusedLayerNorm", kwargs)
        super().__init__(normalized_shape, eps, True, memory_efficient)


class MixedFusedRMSNorm(FusedRMSNorm):
    def __init__(self, normalized_shape, eps=1e-5, *, memory_efficient=False, **kwargs):
        _affine_only("MixedFusedRMSNorm", kwargs)
        super().__init__(normalized_shape, eps, True, memory_efficient)
