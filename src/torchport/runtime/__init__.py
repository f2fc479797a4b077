"""Run-time migration: patch torch so that an unmodified CUDA script runs on another target.

    from torchport import runtime
    runtime.apply("cpu", log="torchport_run.log")   # or: import torchport.auto / torchport run
    ...                                               # CUDA code runs on the CPU
    runtime.undo()                                    # torch is exactly as it was

Every patch is derived from the verdicts in `torchport.targets` (the same ones `torchport migrate`
applies to source), every redirected call site is logged once, and `undo()` puts back every
original object. Importing this package does not import torch. A script written for the NPU runs
the same way where no torch_npu is installed: a stand-in is served (patch_torch_npu.py).

What it does not do (by design or not yet):
- Tensors live on the target, so `x.device.type == "cuda"`, `x.is_cuda` and `args.device == "cuda"`
  checks in the script are False: its CUDA branch is not taken there. Faking them would lie to
  torch and to libraries too; `torchport migrate` rewrites such comparisons in the source.
- `torch.distributed.get_backend()` answers the real backend ("gloo"), not "nccl".
- Names copied out of torch before patching (`from torch import zeros` above `import
  torchport.auto`) keep the originals; `torchport run` and TORCHPORT_TARGET patch before the script
  runs, so only explicit imports of torchport.auto placed late are affected.
- Module objects and plain values of torch.cuda (`torch.cuda.nvtx`, `torch.cuda.has_magma`,
  `torch.cuda.default_generators`) are left alone; a CUDA_VISIBLE_DEVICES set by the script itself
  (after start-up) is not seen.
- Subclassing a patched class (`class S(torch.cuda.amp.GradScaler)`) is not supported.
- TorchScript and torch.compile see through the patches (`patch_compilers`). In scripted code the
  CUDA device constants and `x.cuda()` are rewritten at compile time (and stay so after undo());
  a device computed at run time there (`torch.device(name)`) is not. In torch.compile'd code the
  wrappers' calls are not logged, and `torch.device("cuda")` folds to a CUDA device, which every
  patched API it reaches maps (a comparison with it answers as on CUDA).
"""

from __future__ import annotations

from torchport.active_session import active, set_active
from torchport.runtime.choose import TargetError

__all__ = ["NoStandIn", "TargetError", "UnsupportedOnTarget", "active", "apply", "undo"]


class UnsupportedOnTarget(RuntimeError):
    """A CUDA API the target cannot honour: raised at the call, naming the API and the target."""


class NoStandIn(ModuleNotFoundError):
    """An import of a CUDA-only package that torchport has no stand-in for (flash_attn_2_cuda,
    triton, ...): its message says what to do; `torchport run` reports it as one line."""


def apply(target: str = "auto", log: str | None = "torchport_run.log", honest_to=None):
    """Patch torch for `target` ("auto", "cpu", "npu", ...) and return the Session.

    `log` is the call-site log file (None: no file); `honest_to` is the packages that see the real
    `torch.cuda` (default: `callers.HONEST_BY_DEFAULT`). Applying the same target again is a no-op;
    another target first undoes the current one.
    """
    import os

    from torchport.runtime.session import Session

    log = os.path.abspath(log) if log else None  # a relative path means the directory of now
    current = active()
    if current is not None:
        if current.matches(target, log, honest_to):
            return current
        undo()
    session = Session.start(target, log, honest_to)
    set_active(session)
    return session


def undo() -> None:
    """Restore every patched attribute to its original object and close the log (with its summary)."""
    session = active()
    set_active(None)
    if session is not None:
        session.stop()
