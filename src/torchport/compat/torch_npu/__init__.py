"""A stand-in for torch_npu where none is installed (`torchport run` serves it as `torch_npu`, and
its `npu` as `torch.npu`): every call goes to the run's target, and the fused kernels
(`torch_npu.npu_*`) compute their reference torch code (ops.py, which apis/npu_ops.py describes).

    torch_npu.npu / torch.npu   the run's torch.cuda redirections, logged as torch.npu.X; NPU-only
                                tuning (set_compile_mode, set_option, config.*) a logged no-op
    torch_npu.optim             torchport.optim's NpuFused* optimizers
    torch_npu.profiler          torch.profiler (ProfilerActivity.NPU: the target's activity)
    torch_npu.contrib.transfer_to_npu   nothing: a file with it is CUDA code, which run redirects

Any other name is an AttributeError that names it. The session-dependent parts (torch.npu) are
filled in by runtime/patch_torch_npu.py for the session's duration.
"""

from __future__ import annotations

import importlib

from torchport.apis.npu_ops import NPU_OPS, PACKAGE
from torchport.compat.torch_npu import _log, contrib, npu, optim, profiler  # noqa: F401  (its submodules)
from torchport.targets.verdict import Kind, Verdict

OPS = f"{__name__}.ops"


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    op = NPU_OPS.get(name)  # (first: a kernel is looked up at every call, to log each call site)
    if op is not None:
        kernel = getattr(importlib.import_module(OPS), name, None)  # (by our name: not a served import)
        if kernel is not None:
            _log.note(Verdict(op.qualified, Kind.ADAPTED, f"{OPS}.{name}",
                              op.note or "the torch code the fused kernel computes"))
            return kernel
    found = _log.submodule(__name__, __file__, name)
    if found is not None:
        return found
    raise _log.missing(f"{PACKAGE}.{name}")
