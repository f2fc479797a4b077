"""TP113: RMSNorm written by hand."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.migrate.rules.base.nodes import source_of
from torchport.targets.advice import PATTERN

RSQRT = {"torch.rsqrt"}


class RmsNormAffinity(AffinityRule):
    """RMSNorm by hand, `x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`."""

    code = "TP113"
    order = 1140
    reads = tuple(RSQRT)
    category = PATTERN
    row_name = "rms_norm"
    mentions = rb"rsqrt\([^\n]*mean\("
    title = "affinity: RMSNorm"
    readme = """affinity: `x * rsqrt(x.pow(2).mean(...) + eps)` → `F.rms_norm` (npu: `torch_npu.npu_rms_norm`)"""
    sample = (
        "import torch\n"
        "\n"
        "\n"
        "def rms_norm(x, eps=1e-6):\n"
        "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        row = self.row
        if row is None or self.qualified_name(node.func) not in RSQRT or not node.args:
            return
        inner = source_of(node.args[0].value)
        if ".mean(" in inner and (".pow(2)" in inner or "**2" in inner.replace(" ", "")):
            self.advise(node, row, "x * rsqrt(mean(x^2) + eps)")
