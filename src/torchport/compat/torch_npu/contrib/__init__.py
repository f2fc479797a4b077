"""torch_npu.contrib: only `transfer_to_npu` is stood in for (a no-op: run redirects CUDA already)."""

from __future__ import annotations

from torchport.apis.npu_ops import PACKAGE
from torchport.compat.torch_npu import _log


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    found = _log.submodule(__name__, __file__, name)
    if found is not None:
        return found
    raise _log.missing(f"{PACKAGE}.contrib.{name}")
