"""TP014: `tensor.record_stream(stream)`."""

from __future__ import annotations

import libcst as cst

from torchport.apis.devices import Presence
from torchport.apis.streams import NO_STREAM_ALLOCATOR, record_stream
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.nodes import run_only_when
from torchport.migrate.rules.base.rule import Rule
from torchport.migrate.rules.cuda_api import sole_statement


class RecordStreamRule(Rule):
    """`x.record_stream(s)` tells the caching allocator that a stream still uses `x`; CPU tensors
    have no such allocator and reject the call. Dropped on the CPU target, run only when an
    accelerator is present on the device-agnostic target, kept on device targets."""

    code = "TP014"
    order = 170
    mentions = rb"\brecord_stream\b"
    title = "record_stream calls"
    readme = """`x.record_stream(s)`: dropped on cpu (CPU tensors reject it), guarded on `accelerator`"""
    sample = "import torch\n\n\ndef keep(batch):\n    batch.record_stream(torch.cuda.current_stream())\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "record_stream"):
            return
        line = sole_statement(self, node)
        if line is None:
            return
        target = self.target
        presence = record_stream(target)
        if presence is Presence.NEVER:
            self.change(line, remove_statement, f"drop .record_stream(): {NO_STREAM_ALLOCATOR}")
        elif presence is Presence.AT_RUN_TIME and not self.guarded_already(line):
            guard = target.guard
            self.change(line, run_only_when(guard), f"call .record_stream() only when {guard}", needs=guard)
