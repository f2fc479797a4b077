"""TP112: attention written by hand, which one fused kernel computes."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.targets.advice import PATTERN

SOFTMAX = {"torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax"}
MATMUL = {"matmul", "bmm", "einsum"}


class AttentionAffinity(AffinityRule):
    """Attention by hand, `softmax(q @ k.transpose(-2, -1) / scale) @ v`: the softmax of a
    matrix product is the tell. One fused kernel does it without keeping the L x L scores."""

    code = "TP112"
    order = 1130
    reads = tuple(SOFTMAX)
    category = PATTERN
    row_name = "attention"
    mentions = rb"softmax\([^\n]*(?:@|matmul|bmm|einsum)|\)\.softmax\("
    title = "affinity: attention"
    readme = """affinity: `softmax(q @ k^T ...)` by hand → `scaled_dot_product_attention` (npu:
    `torch_npu.npu_fusion_attention`)"""
    sample = (
        "import math\n"
        "\n"
        "import torch.nn.functional as F\n"
        "\n"
        "\n"
        "def attend(q, k, v):\n"
        "    return F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        is_softmax = self.qualified_name(func) in SOFTMAX or (isinstance(func, cst.Attribute) and func.attr.value == "softmax")
        row = self.row
        if row is None or not is_softmax or not node.args:
            return
        scores = func.value if isinstance(func, cst.Attribute) and self.qualified_name(func) is None else node.args[0].value
        if _contains_matmul(scores):
            self.advise(node, row, "softmax(q @ k^T)")


def _contains_matmul(node: cst.CSTNode) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_BinaryOperation(self, op: cst.BinaryOperation) -> None:  # noqa: N802
            if isinstance(op.operator, cst.MatrixMultiply):
                found.append(op)

        def visit_Call(self, call: cst.Call) -> None:  # noqa: N802
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name in MATMUL:
                found.append(call)

    node.visit(Finder())
    return bool(found)
