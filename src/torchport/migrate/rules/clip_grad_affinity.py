"""TP111: `clip_grad_norm_`, which a fused optimizer does on its flat buffer at once."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.targets.advice import FUNCTION

CLIP = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_"}


class ClipGradAffinity(AffinityRule):
    """`clip_grad_norm_` walks every gradient; a fused optimizer clips its flat buffer at once."""

    code = "TP111"
    order = 1120
    reads = tuple(CLIP)
    category = FUNCTION
    row_name = "torch.nn.utils.clip_grad_norm_"
    mentions = rb"clip_grad_norm_"
    title = "affinity: fused clipping"
    readme = """affinity: `clip_grad_norm_` → the fused optimizer's `clip_grad_norm_fused_`"""
    sample = "import torch\n\n\ndef clip(model):\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = self.qualified_name(node.func)
        row = self.row if name in CLIP else None
        if row is not None:
            self.advise(node, row, name)
