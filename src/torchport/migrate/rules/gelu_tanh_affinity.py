"""TP116: GELU's tanh approximation written by hand."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.migrate.rules.base.nodes import source_of
from torchport.targets.advice import PATTERN

TANH = {"torch.tanh", "torch.nn.functional.tanh"}


class GeluTanhAffinity(AffinityRule):
    """GELU's tanh approximation by hand, `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`."""

    code = "TP116"
    order = 1170
    reads = tuple(TANH)
    category = PATTERN
    row_name = "gelu_tanh"
    mentions = rb"0\.044715"
    title = "affinity: GELU"
    readme = """affinity: GELU's tanh form by hand → `F.gelu(approximate="tanh")` (npu: `torch_npu.npu_gelu`)"""
    sample = (
        "import math\n"
        "\n"
        "import torch\n"
        "\n"
        "\n"
        "def gelu(x):\n"
        "    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        row = self.row
        if row is not None and self.qualified_name(node.func) in TANH and node.args:
            if "0.044715" in source_of(node.args[0].value):
                self.advise(node, row, "0.5 * x * (1 + tanh(...))")
