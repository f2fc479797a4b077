"""TP011: `"cuda" if torch.cuda.is_available() else "cpu"` on the CPU."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base import Rule, remove_statement
from torchport.migrate.rules.device_exprs import cuda_literal_index, string_value


def _device_string(rule: Rule, node: cst.BaseExpression) -> cst.BaseExpression:
    """The string inside `torch.device("...")`, or the node itself."""
    if isinstance(node, cst.Call) and rule.qualified_name(node.func) == "torch.device" and len(node.args) == 1:
        return node.args[0].value
    return node


class CpuFallbackRule(Rule):
    """`"cuda" if torch.cuda.is_available() else "cpu"` (also inside `torch.device(...)`) where the
    answer is known: the CPU branch on the CPU target; on the device-agnostic target the device
    type already falls back to the CPU, so the test would be made twice. For the same reason
    `assert torch.cuda.is_available()`, a GPU-only script's demand, is dropped there: its code
    runs on the CPU when no accelerator is present."""

    code = "TP011"
    mentions = rb"\bcuda\b"
    reads = ("torch.device", "torch.cuda.is_available")
    title = "availability tests with a known answer"

    def visit_Assert(self, node: cst.Assert) -> None:  # noqa: N802
        test = node.test
        if self.target.device_type is not None or not isinstance(test, cst.Call):
            return
        if self.qualified_name(test.func) != "torch.cuda.is_available":
            return
        line = self.parent(node)
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            self.change(line, remove_statement, "drop the assertion: the device type falls back to the CPU",
                        operation=Operation.DELETE)

    def visit_IfExp(self, node: cst.IfExp) -> None:  # noqa: N802
        if self.target.device_type not in ("cpu", None):
            return
        test = node.test
        if not (isinstance(test, cst.Call) and self.qualified_name(test.func) == "torch.cuda.is_available"):
            return
        body, orelse = _device_string(self, node.body), _device_string(self, node.orelse)
        if cuda_literal_index(body)[0] and string_value(orelse) == "cpu":
            if self.target.device_type == "cpu":
                self.change(node, lambda updated: updated.orelse, "keep only the CPU branch of the availability test")
            else:
                self.change(node, lambda updated: updated.body, "the device type already falls back to the CPU")
