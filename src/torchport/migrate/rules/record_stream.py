"""TP014: `tensor.record_stream(stream)`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base import Rule, remove_statement, run_only_when, source_of
from torchport.migrate.rules.cuda_api import sole_statement


class RecordStreamRule(Rule):
    """`x.record_stream(s)` tells the caching allocator that a stream still uses `x`; CPU tensors
    have no such allocator and reject the call. Dropped on the CPU target, run only when an
    accelerator is present on the device-agnostic target, kept on device targets."""

    code = "TP014"
    mentions = rb"\brecord_stream\b"
    title = "record_stream calls"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "record_stream"):
            return
        line = sole_statement(self, node)
        if line is None:
            return
        target = self.target
        if target.device_type == "cpu":
            self.change(line, remove_statement, "drop .record_stream(): CPU tensors have no stream allocator")
        elif target.guard is not None and not self._guarded_already(line):
            guard = target.guard
            self.change(line, run_only_when(guard), f"call .record_stream() only when {guard}", needs=guard)

    def _guarded_already(self, line: cst.SimpleStatementLine) -> bool:
        block = self.parent(line)
        statement = self.parent(block) if isinstance(block, cst.IndentedBlock) else None
        return isinstance(statement, cst.If) and source_of(statement.test) == self.target.guard
