"""TP115: SwiGLU written by hand."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.targets.advice import PATTERN

SILU = {"torch.nn.functional.silu"}


class SwigluAffinity(AffinityRule):
    """SwiGLU by hand, `F.silu(gate) * up`."""

    code = "TP115"
    order = 1160
    reads = tuple(SILU)
    category = PATTERN
    row_name = "swiglu"
    mentions = rb"silu\([^\n]*\)\s*\*|\*\s*[\w.]*silu\("
    title = "affinity: SwiGLU"
    readme = """affinity (npu): `F.silu(a) * b` → `torch_npu.npu_swiglu`"""
    sample = "import torch.nn.functional as F\n\n\ndef swiglu(gate, up):\n    return F.silu(gate) * up\n"

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:  # noqa: N802
        row = self.row
        if row is None or not isinstance(node.operator, cst.Multiply):
            return
        for side in (node.left, node.right):
            if isinstance(side, cst.Call) and self.qualified_name(side.func) in SILU:
                self.advise(node, row, "silu(a) * b")
                return
