"""torch_npu.npu, which torch_npu also installs as `torch.npu`: the NPU's device module.

Under `torchport run` (runtime/patch_torch_npu.py) each name resolves, on first use, to what the
run makes of its CUDA twin (`torch.npu.synchronize` is `torch.cuda.synchronize` redirected to the
target, logged as torch.npu.synchronize); NPU-only tuning is a logged no-op. Outside a run there
is no target to map to: every name is an AttributeError that says so.
"""

from __future__ import annotations

from torchport.compat.torch_npu import _log
from torchport.compat.torch_npu.npu import amp, utils
from torchport.targets.npu import TARGET as NPU

__all__ = ["amp", "utils"]
SERVED_AS = NPU.device_module  # torch.npu: its names are logged as this module's


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    raise _log.outside_a_run(f"{SERVED_AS}.{name}")
