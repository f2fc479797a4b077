"""What torch_npu's fused kernels (`torch_npu.npu_*`) compute, as the torch code that computes it:
the knowledge that `migrate --from npu` writes into a file and that `run`'s stand-in torch_npu
(torchport.compat.torch_npu) calls.

Each kernel is either *inline* (one torch expression takes its place where it is called: a
template over its parameters, each used at most once, so no argument is evaluated twice) or a
*helper* (its reference function, in torchport/compat/torch_npu/ops.py, is written once into the
migrated file, and the call keeps its arguments). The reference functions are the one place the
computation is written: migrate reads their source from that file (with `ast`, never importing
torch), the stand-in imports them.

Signatures are torch_npu's (Ascend/pytorch, torch_npu/meta/_meta_registrations.py and the
operator docs); no torch at import, no LibCST.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

PACKAGE = "torch_npu"
# where the reference functions live, read as text (compat/torch_npu/ops.py)
REFERENCE_FILE = Path(__file__).resolve().parent.parent / "compat" / "torch_npu" / "ops.py"


@dataclass(frozen=True)
class NpuOp:
    name: str  # "npu_linear": torch_npu.npu_linear
    parameters: tuple[str, ...]  # torch_npu's, in order
    defaults: dict[str, str] = field(default_factory=dict)  # parameter -> its default, as source
    inline: str | None = None  # "torch.nn.functional.linear({input}, {weight}, {bias})"; None: a helper
    # the expression that stands for `call[0]`, for a kernel that returns a tuple of which code
    # mostly keeps the first (npu_rms_norm's (y, rstd)); None: no such form
    inline_first: str | None = None
    note: str = ""  # what the report row says of the replacement

    @property
    def qualified(self) -> str:
        return f"{PACKAGE}.{self.name}"


NPU_OPS: dict[str, NpuOp] = {op.name: op for op in (
    NpuOp("npu_format_cast", ("input", "acl_format"), inline="{input}",
          note="a storage-layout cast on the NPU; the same tensor elsewhere"),
    NpuOp("npu_linear", ("input", "weight", "bias"), {"bias": "None"},
          inline="torch.nn.functional.linear({input}, {weight}, {bias})"),
)}


@lru_cache(maxsize=None)
def reference_source(name: str) -> str:
    """The source of the reference function `name` (a def of compat/torch_npu/ops.py), as it is
    written into a migrated file."""
    text = REFERENCE_FILE.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node)
    raise KeyError(f"no reference function {name} in {REFERENCE_FILE.name}")
