"""TP110: torch (timm, BERT) optimizers that have a fused twin in `torchport.optim`; the only
affinity swap ever applied (`migrate --apply-affinity`)."""

from __future__ import annotations

import libcst as cst

from dataclasses import replace

from torchport.migrate.rules.apex_advice import ascend_optimizer, keeps_apex
from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.migrate.rules.base.nodes import parse_expression
from torchport.targets.advice import OPTIMIZER


class OptimizerAffinity(AffinityRule):
    """A torch (or timm, or BERT) optimizer that has a fused twin: every parameter updated in a
    few kernel launches instead of several per parameter. Ascend's published ports all made this
    swap by hand. With --apply-affinity the constructor is swapped, its arguments kept."""

    code = "TP110"
    order = 1110
    reads = ("torch.optim",)
    category = OPTIMIZER
    mentions = rb"\b(?:SGD|Adam|AdamW|Adadelta|RMSprop|Lamb|AdamP|RMSpropTF|BertAdam)\("
    title = "affinity: fused optimizers"
    readme = """affinity: torch (timm, BERT) optimizers → their fused twins in `torchport.optim` (swapped by
    `--apply-affinity`: same arguments and state_dict)"""
    sample = "import torch\n\n\ndef make(model):\n    return torch.optim.AdamW(model.parameters(), lr=1e-3)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = self.called(node)
        if name is None:
            return
        name = _canonical_optimizer(name)
        row = self.affinity(name)
        if row is None:
            return
        twin = ascend_optimizer(name) if keeps_apex(self) else None
        self.advise(node, replace(row, note=f"{row.note}; or, with Ascend's apex kept, {twin}") if twin else row, name)
        if row.safe and self.context.apply_affinity:
            replacement = row.replacement

            def swap(updated: cst.Call) -> cst.Call:
                return updated.with_changes(func=parse_expression(replacement))

            self.change(node, swap, f"use {replacement} (--apply-affinity: same arguments and state_dict)",
                        needs=replacement)


def _canonical_optimizer(name: str) -> str:
    """`torch.optim.adam.Adam` -> `torch.optim.Adam`, `timm.optim.lamb.Lamb` -> `timm.optim.Lamb`."""
    for package in ("torch.optim.", "timm.optim."):
        if name.startswith(package):
            return package + name.rsplit(".", 1)[-1]
    return name
