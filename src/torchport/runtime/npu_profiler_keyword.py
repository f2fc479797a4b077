"""Under run, for NPU code: torch_npu's keyword of torch's own autograd profiler,
`torch.autograd.profiler.profile(use_npu=True)` (which torch_npu patches torch to take), is taken
as torch's `use_device=` for the run's device, and dropped on the host (the CPU is always profiled;
torch warns that "cpu" is no valid use_device). `migrate --from npu` writes the same into the file."""

from __future__ import annotations

import functools
import sys

from torchport.apis.profiler import AUTOGRAD_PROFILE, DEVICE_KEYWORD
from torchport.targets import npu as npu_facts
from torchport.targets.devices import is_host
from torchport.targets.verdict import Kind, Verdict

KEYWORD = npu_facts.AUTOGRAD_PROFILER_KEYWORD  # use_npu


def install(session) -> None:
    import torch.autograd.profiler as profiler

    host = is_host(session.device_type)
    new = None if host else f"{DEVICE_KEYWORD}={session.device_type!r}"
    verdict = Verdict(f"{AUTOGRAD_PROFILE}({KEYWORD}=)", Kind.ADAPTED if new else Kind.NOOP, new,
                      "torch_npu's keyword" + ("; the CPU is profiled anyway" if host else ""))
    original = profiler.profile.__init__
    note = session.log.note_frame

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        if KEYWORD in kwargs:
            on = kwargs.pop(KEYWORD)
            note(verdict, sys._getframe(1))
            if on and not host:
                kwargs.setdefault(DEVICE_KEYWORD, session.device_type)
        original(self, *args, **kwargs)

    session.book.replace(profiler.profile, "__init__", __init__)
