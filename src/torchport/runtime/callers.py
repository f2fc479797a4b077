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
    called by `nn.Linear(device="cuda")` is reported at the user's line, not inside torch."""
    first = frame
    while frame is not None and top_package(frame) in ("torch", "torchport"):
        frame = frame.f_back
    return frame if frame is not None else first


def caller(depth: int):
    """The frame `depth` levels above the caller of this function."""
    return sys._getframe(depth + 1)
