"""TP016: `x.pin_memory()` and `pin_memory=True`."""

from __future__ import annotations

import libcst as cst

from torchport.apis.devices import Presence
from torchport.apis.memory import pinned_memory
from torchport.findings import Operation
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.nodes import and_also, only_when, source_of, without_arguments
from torchport.migrate.rules.base.rule import Rule


class PinMemoryRule(Rule):
    """Pinned host memory speeds copies to a device; with no device there is nothing to pin for,
    and torch raises (`x.pin_memory()`, `torch.empty(..., pin_memory=True)`) or warns
    (`DataLoader(pin_memory=True)`). On the CPU target `x.pin_memory()` is `x` and the
    `pin_memory=` argument goes; on the device-agnostic target both apply only when an
    accelerator is present. Device targets keep them."""

    code = "TP016"
    order = 190
    mentions = rb"\bpin_memory\b"
    title = "pinned memory"
    readme = """`x.pin_memory()` → `x` and `pin_memory=` dropped on cpu (torch raises or warns with nothing to pin for);
    applied only when an accelerator is present on `accelerator`"""
    sample = "import torch\n\n\ndef pinned(batch):\n    return batch.pin_memory()\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        target = self.target
        if pinned_memory(target) is Presence.ALWAYS:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory" and not node.args:
            self._pin_method(node, func.value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "pin_memory" and not _is_false(arg.value):
                self._pin_argument(node, arg)

    def _pin_method(self, call: cst.Call, tensor: cst.BaseExpression) -> None:
        guard = self.target.guard
        if guard is None:
            line = self._self_assignment(call, tensor)
            if line is not None:  # `x = x.pin_memory()` would become `x = x`
                self.change(line, remove_statement, "drop .pin_memory(): nothing to pin for on the CPU",
                            operation=Operation.DELETE)
            else:
                self.change(call, lambda updated: updated.func.value, "drop .pin_memory(): nothing to pin for on the CPU")
            return
        if self.guarded_already(call):
            return
        if not isinstance(tensor, (cst.Name, cst.Attribute)):  # (the guarded form would compute it twice)
            self.report(call, Operation.NOTE, f"pin memory only when {guard}: name the tensor first")
            return

        self.change(call, lambda updated: only_when(guard, updated, updated.func.value), f"pin memory only when {guard}",
                    needs=guard)

    def _pin_argument(self, call: cst.Call, argument: cst.Arg) -> None:
        guard = self.target.guard
        if guard is None:
            self.change(call, lambda updated: without_arguments(updated, {"pin_memory"}),
                        "drop pin_memory=: nothing to pin for on the CPU")
            return
        value = argument.value
        if guard in source_of(value):
            return  # migrated already

        self.change(argument, lambda updated: updated.with_changes(value=and_also(updated.value, guard)),
                    f"pin memory only when {guard}", needs=guard)  # (on the argument: its value may be rewritten too)

    def _self_assignment(self, call: cst.Call, tensor: cst.BaseExpression) -> cst.SimpleStatementLine | None:
        assign = self.parent(call)
        line = self.parent(assign)
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and len(line.body) == 1):
            return None
        return line if source_of(assign.targets[0].target) == source_of(tensor) else None


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"
