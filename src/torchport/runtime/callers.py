"""Who is calling: the user's code, or a library that probes the hardware.

`torch.cuda.is_available()` must answer True to the user's script (so it takes its GPU path, which
the runtime then redirects), but libraries that pick a backend by probing CUDA (accelerate,
transformers, triton, ...) and torch itself must see the truth: Ascend's transfer_to_npu answered
True to everyone and sent accelerate and Triton down CUDA-only paths (accelerate#3020). So every
patched `torch.cuda` function gives the real, unpatched answer to callers in these packages.
"""

from __future__ import annotations

import os
import sys

from torchport.targets.expressions import TARGET_CODE

HONEST_BY_DEFAULT = frozenset(
    {
        "torch", "accelerate", "transformers", "triton", "deepspeed", "diffusers", "peft", "trl",
        "lightning", "pytorch_lightning", "bitsandbytes", "xformers", "flash_attn", "vllm", "apex",
    }
)

HONEST_ENV = "TORCHPORT_HONEST_TO"  # comma-separated package names; replaces the default


def honest_packages(names=None) -> frozenset[str]:
    """The packages that see the real torch.cuda: `names`, else $TORCHPORT_HONEST_TO, else the default."""
    if names is None:
        names = os.environ.get(HONEST_ENV)
        if names is None:
            return HONEST_BY_DEFAULT
    if isinstance(names, str):
        names = names.split(",")
    return frozenset(n.strip() for n in names if n.strip())


def top_package(frame) -> str:
    return frame.f_globals.get("__name__", "").partition(".")[0]


def report_frame(frame):
    """The frame to name in the log: the first one outside torch and torchport, so that a factory
    called by `nn.Linear(device="cuda")` is reported at the user's line, not inside torch. Code
    that torch generates (FX's `<eval_with_key>` forward of a torch.compile'd graph, with no
    `__name__` in its globals) is walked past too, to the compiled function's frame."""
    first = frame
    while frame is not None and top_package(frame) in ("torch", "torchport", ""):
        frame = frame.f_back
    return frame if frame is not None else first


def caller(depth: int):
    """The frame `depth` levels above the caller of this function."""
    return sys._getframe(depth + 1)


HONEST, SCRIPT, OURS = "honest", "script", "torchport"


class CallerSorter:
    """Sorts the callers of patched torch.cuda functions into honest ones and the script's.

    What a frame is depends only on its module's `__name__`, so it is decided once per module
    name (not per code object: code compiled from the same string in two modules compares
    equal). Only frames of torchport itself (our own helpers, called by someone else) are walked
    past, to judge their caller instead."""

    def __init__(self, honest: frozenset[str]) -> None:
        self.honest = honest
        # module name -> HONEST, SCRIPT or OURS; hot wrappers read it inline for the first two
        self.sorts: dict = {}

    def script_frame(self, frame):
        """`frame` itself (or, past torchport's frames, its caller's) when the call is the
        script's, so that it is redirected and logged there; None when the caller is honest."""
        name = frame.f_globals.get("__name__")
        sort = self.sorts.get(name)
        if sort is None:
            sort = self.sorts[name] = self._sort(frame)
        if sort is SCRIPT:
            return frame
        if sort is HONEST:
            return None
        while frame.f_back is not None and top_package(frame) == "torchport":
            frame = frame.f_back
        return None if top_package(frame) in self.honest else frame

    def _sort(self, frame) -> str:
        if frame.f_globals.get("__name__") == TARGET_CODE:
            return HONEST
        package = top_package(frame)
        if package == "torchport":
            return OURS
        return HONEST if package in self.honest else SCRIPT
