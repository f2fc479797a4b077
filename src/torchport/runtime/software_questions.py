"""Which of a script's `torch.cuda.is_available()` calls ask about a CUDA build of other software
(`"onnxruntime-gpu" if cuda else "onnxruntime"` after `cuda = torch.cuda.is_available()`, YOLOv5's
export.py), not about the device the script computes on. `migrate` keeps those calls (TP011);
under `run` they get torch's own answer (False without a CUDA GPU), so the script asks for the
CPU build on the CPU. The calls are found by the same reading, made of the caller's file the first
time it asks; a file whose text names no such build is not read at all."""

from __future__ import annotations

import linecache
import re
from functools import lru_cache

# A string that names a build: "onnxruntime-gpu", "-cpu", "paddlepaddle-gpu", "CUDAExecutionProvider".
_NAMES_A_BUILD = re.compile(r"""["'][^"'\n]*(?:-gpu|-cpu|gpu-|ExecutionProvider)""", re.IGNORECASE)


def asks_for_software(target: str, frame) -> bool:
    """Whether the call being made at `frame` (the script's, run on `target`) is such a question."""
    return frame.f_lineno in _software_lines(target, frame.f_code.co_filename)


@lru_cache(maxsize=None)
def _software_lines(target: str, filename: str) -> frozenset[int]:
    text = "".join(linecache.getlines(filename))
    if not text or not _NAMES_A_BUILD.search(text):
        return frozenset()
    from torchport import targets
    from torchport.findings import Operation
    from torchport.migrate.rules.is_available import KEPT_FOR_SOFTWARE, IsAvailableRule
    from torchport.migrate.selection import RuleSelection
    from torchport.migrate.source import migrate_source

    code = IsAvailableRule.code
    result = migrate_source(text.encode("utf-8"), targets.get(target), filename, chosen=RuleSelection(select=(code,)))
    return frozenset(f.start_line for f in result.findings
                     if f.code == code and f.operation is Operation.NOTE and f.message.startswith(KEPT_FOR_SOFTWARE))
