"""TP102: float64 on a device that has none (MPS). Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import source_of
from torchport.migrate.rules.base.rule import Rule

FLOAT64 = {"torch.float64", "torch.double"}


class Float64Advice(Rule):
    """A device without float64 (MPS) raises on any float64 tensor: `torch.float64`,
    `torch.double` and `.double()` each get a row."""

    code = "TP102"
    order = 1020
    reads = tuple(FLOAT64)
    mentions = rb"float64|\bdouble\b"
    title = "advice: float64"
    readme = """advice (mps): `torch.float64`, `torch.double`, `.double()`: MPS has no float64"""
    sample = "import torch\nreference = torch.zeros(2, dtype=torch.float64)\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.no_float64

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if self.target.advice.no_float64 and self.qualified_name(node) in FLOAT64:
            self._advise(node, source_of(node))

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if self.target.advice.no_float64 and isinstance(func, cst.Attribute) and func.attr.value == "double" and not node.args:
            self._advise(node, ".double()")

    def _advise(self, node: cst.CSTNode, api: str) -> None:
        self.report(node, Operation.PRECISION,
                    f"{self.target.name} has no float64: this raises there; use float32 (or keep this part on the CPU)", api=api)
