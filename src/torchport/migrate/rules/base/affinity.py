"""What the affinity rules share (TP110-TP116): faster APIs the target has for what a line does
(`affinity_api_call.csv`).

The table is data in targets/advice.py; these rules find where a script uses what a row names.
Only the optimizer swap is ever applied (`migrate --apply-affinity`): the fused optimizers take
the call's arguments and compute the same update (on npu torch_npu's, only where the row's `takes`
says each argument means the same). The others change numerics or need the tensors in another
layout, so a person decides.
"""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule
from torchport.targets.advice import Affinity


class AffinityRule(Rule):
    """A rule that finds where a script uses what a row of the target's affinity table names."""

    category: str = ""  # the rows of the target's table this rule looks at
    row_name: str = ""  # the name of its row ("" for every row of its category)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.row = self.affinity(self.row_name) if self.row_name else None  # (looked up once a file, not once a node)

    @classmethod
    def applies_to(cls, target) -> bool:
        return any(r.category == cls.category and cls.row_name in ("", r.name) for r in target.advice.affinity)

    def affinity(self, name: str) -> Affinity | None:
        rows = self.target.advice.affinity
        return next((row for row in rows if row.name == name and row.category == self.category), None)

    def advise(self, node: cst.CSTNode, row: Affinity, api: str) -> None:
        message = f"{row.replacement}: {row.note}" if row.note else row.replacement
        self.report(node, Operation.AFFINITY, message, api=api, replacement=row.replacement, category=row.category)

    def called(self, node: cst.Call) -> str | None:
        """The qualified name of what `node` calls, torch's or another library's."""
        return self.qualified_name(node.func) or self.imported_name(node.func)
