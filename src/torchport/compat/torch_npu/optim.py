"""torch_npu.optim: the NpuFused* optimizers are torchport.optim's (same names, same signatures;
aliases of its fused optimizers, NpuFusedLamb with torch_npu's model)."""

from __future__ import annotations

from torchport.compat.torch_npu import _log
from torchport.targets.npu_optim import PACKAGE
from torchport.targets.verdict import Kind, Verdict

NATIVE = "torchport.optim"


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    import torchport.optim as native

    if name in native.__all__ and hasattr(native, name) and name.startswith("Npu"):
        _log.note(Verdict(f"{PACKAGE}.{name}", Kind.SAME, f"{NATIVE}.{name}", "flat-buffer fused optimizer, any device"))
        return getattr(native, name)
    raise _log.missing(f"{PACKAGE}.{name}")
