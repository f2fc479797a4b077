"""TP110: torch (timm, BERT) optimizers that have a fused twin (torch_npu's own on npu,
`torchport.optim`'s elsewhere); the only affinity swap ever applied (`migrate --apply-affinity`)."""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst

from torchport.migrate.rules.apex_advice import ascend_optimizer, keeps_apex
from torchport.migrate.rules.base.affinity import AffinityRule
from torchport.migrate.rules.base.nodes import parse_expression
from torchport.targets.advice import OPTIMIZER, Affinity


class OptimizerAffinity(AffinityRule):
    """A torch (or timm, or BERT) optimizer that has a fused twin: every parameter updated in a
    few kernel launches instead of several per parameter. Ascend's published ports all made this
    swap by hand. With --apply-affinity the constructor is swapped, its arguments kept, where the
    twin takes every argument the call passes with the same meaning (the row's `takes`) and the file
    does nothing the twin refuses (its `conflict`); elsewhere the row says why it was not. Where
    Ascend's apex is kept, the row names apex's twin, which only amp.initialize can drive: advice."""

    code = "TP110"
    order = 1110
    reads = ("torch.optim",)
    category = OPTIMIZER
    mentions = rb"\b(?:SGD|Adam|AdamW|Adadelta|RMSprop|Lamb|AdamP|RMSpropTF|BertAdam)\("
    title = "affinity: fused optimizers"
    readme = """affinity: torch (timm, BERT) optimizers → their fused twins: `torch_npu.optim.NpuFused*` on npu
    (`apex.optimizers.NpuFused*` where Ascend's apex is kept), `torchport.optim` on the other targets (swapped
    by `--apply-affinity` where the twin takes the call's arguments with the same meaning)"""
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
        if twin is not None:  # (swapped only where amp.initialize drives it with combined gradients: --amp apex's form)
            row = replace(row, replacement=twin, safe=row.safe and bool(COMBINED.search(self.context.whole_source)),
                          note=f"Ascend's apex: pass it to amp.initialize(..., combine_grad=True), its step needs amp; {row.note}")
        refusal = self._refusal(node, row) if row.safe else ""
        if refusal:
            row = replace(row, safe=False, note=f"{row.note}; not swapped by --apply-affinity: {refusal}")
        self.advise(node, row, name)
        if row.safe and self.context.apply_affinity:
            replacement = row.replacement

            def swap(updated: cst.Call) -> cst.Call:
                return updated.with_changes(func=parse_expression(replacement))

            self.change(node, swap, f"use {replacement} (--apply-affinity: the same arguments, the same update)",
                        needs=replacement)

    def _refusal(self, node: cst.Call, row: Affinity) -> str:
        """Why the call cannot be swapped for the row's twin ("" when it can)."""
        if row.conflict and re.search(row.conflict.encode(), self.context.whole_source):
            return row.conflict_why
        if row.takes is None:
            return ""
        keywords = [arg.keyword.value for arg in node.args if arg.keyword is not None]
        positional = sum(1 for arg in node.args if arg.keyword is None and not arg.star)
        starred = any(arg.star for arg in node.args)
        after_first = positional - 1 if "params" not in keywords else positional
        return row.takes.refuses(max(after_first, 0), [k for k in keywords if k != "params"], starred)


# amp.initialize with combine_grad=True: what an NpuFused optimizer's step needs (Ascend's apex).
COMBINED = re.compile(rb"amp\.initialize\([^)]*\bcombine_grad\s*=\s*True")


def _canonical_optimizer(name: str) -> str:
    """`torch.optim.adam.Adam` -> `torch.optim.Adam`, `timm.optim.lamb.Lamb` -> `timm.optim.Lamb`."""
    for package in ("torch.optim.", "timm.optim."):
        if name.startswith(package):
            return package + name.rsplit(".", 1)[-1]
    return name
