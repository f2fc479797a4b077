"""torch_npu.npu.amp (torch.npu.amp): resolved as torch.npu is (see its docstring)."""

from __future__ import annotations

from torchport.compat.torch_npu import _log
from torchport.targets.npu import TARGET as NPU

SERVED_AS = f"{NPU.device_module}.amp"


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    raise _log.outside_a_run(f"{SERVED_AS}.{name}")
