"""TP114: rotary position embedding written by hand."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.targets.advice import PATTERN


class RotaryEmbeddingAffinity(AffinityRule):
    """Rotary position embedding by hand: the `rotate_half` helper that every RoPE copy defines."""

    code = "TP114"
    order = 1150
    reads = ()
    category = PATTERN
    row_name = "rotary_embedding"
    mentions = rb"rotate_half"
    title = "affinity: rotary embedding"
    readme = """affinity (npu): a `rotate_half` helper (rotary embedding) → `torch_npu.npu_rotary_mul`"""
    sample = (
        "import torch\n"
        "\n"
        "\n"
        "def rotate_half(x):\n"
        "    a, b = x.chunk(2, dim=-1)\n"
        "    return torch.cat((-b, a), dim=-1)\n"
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        row = self.row
        if row is not None and node.name.value == "rotate_half":
            self.advise(node, row, "rotate_half")
