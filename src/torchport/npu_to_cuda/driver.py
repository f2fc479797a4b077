"""One file's conversion from the NPU dialect to CUDA's (the interface migrate/from_npu.py calls)."""

from __future__ import annotations

import re
from itertools import chain
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchport.findings import Finding
from torchport.layout import Layout
from torchport.npu_to_cuda import imports
from torchport.npu_to_cuda.collect import Collector
from torchport.npu_to_cuda.edits import Apply, Edits
from torchport.targets import Target
from torchport.targets import npu as npu_facts

# A file that never says any of these has no NPU code: it is migrated as CUDA code, byte for byte.
# (and Ascend's tuning, adapters and profiler keyword, which a file may name without naming the NPU: combine_grad,
# TASK_QUEUE_ENABLE, deepspeed_npu)
MENTIONS_NPU = re.compile("|".join([
    r"\bnpu\b", "torch_npu", r"\bhccl\b", "ASCEND_", "NpuFused", r"\bnpu_\w+", r"\.npu\(",
    # (torch_npu 1.x's kernels without the npu_ prefix, on torch: torch.fast_gelu)
    *(rf"\b{npu_facts.LEGACY_KERNEL_MODULE}\.{re.escape(name)}\b" for name in sorted(npu_facts.bare_kernels())),
    *(rf"\b{re.escape(name)}\b" for name in (*npu_facts.TUNING_ENV, *chain(*npu_facts.TUNING_KEYWORDS.values()),
                                              *npu_facts.PLUGINS, npu_facts.AUTOGRAD_PROFILER_KEYWORD))]).encode())


@dataclass
class Conversion:
    source: str  # the file in CUDA's dialect (the text as read where nothing changed)
    findings: list[Finding] = field(default_factory=list)  # at lines of the text as read
    changed: bool = False


def convert_source(text: str, path: str, target: Target) -> Conversion:
    """`text` (a whole Python file) rewritten from the NPU dialect into CUDA's; `target`: what the
    migration then moves it to (an NpuFused optimizer becomes torch's own on cuda, torchport.optim's
    twin elsewhere)."""
    if not MENTIONS_NPU.search(text.encode("utf-8", "surrogatepass")):
        return Conversion(text)
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return Conversion(text)  # (the migration reports what it cannot read)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # (parsed here: no one else holds the tree)
    edits = Edits()
    walk = Collector(target, edits)
    walk.layout = Layout(module)
    wrapper.visit(walk)
    if not edits.fixes and not edits.dropped:
        return Conversion(text, _findings(path, edits))
    module = imports.add_needed(wrapper.module.visit(Apply(edits)), edits)
    new = module.code
    return Conversion(new, _findings(path, edits), new != text)


def _findings(path: str, edits: Edits) -> list[Finding]:
    rows = sorted(edits.rows, key=lambda row: (row.line, row.code))
    return [Finding(path, row.line, row.line, row.code, row.operation, row.message, row.api) for row in rows]
