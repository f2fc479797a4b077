"""One file's conversion from the NPU dialect to CUDA's (the interface migrate/from_npu.py calls)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torchport.findings import Finding
from torchport.targets import Target

# A file that never says any of these has no NPU code: it is migrated as CUDA code, byte for byte.
MENTIONS_NPU = re.compile(rb"\bnpu\b|torch_npu|\bhccl\b|ASCEND_|NpuFused|\bnpu_\w+|\.npu\(")


@dataclass
class Conversion:
    source: str  # the file in CUDA's dialect (the text as read where nothing changed)
    findings: list[Finding] = field(default_factory=list)  # at lines of the text as read
    changed: bool = False


def convert_source(text: str, path: str, target: Target) -> Conversion:
    """`text` (a whole Python file) rewritten from the NPU dialect into CUDA's; `target`: what the
    migration then moves it to (an NpuFused optimizer becomes torch's own on cuda, torchport.optim's
    twin elsewhere)."""
    return Conversion(text)
