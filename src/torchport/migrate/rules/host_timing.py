"""TP010: CUDA timing events on targets without usable events."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base import Rule, parse_expression, remove_statement
from torchport.migrate.rules.cuda_api import sole_statement
from torchport.targets.verdict import Kind

EVENT = "torch.cuda.Event"


class HostTimingRule(Rule):
    """Time with the host clock where the target has no timing events (the CPU, or no accelerator).

    `start = torch.cuda.Event(enable_timing=True)` is dropped, `start.record()` becomes
    `start = time.perf_counter()`, `start.elapsed_time(end)` becomes `(end - start) * 1000`
    (milliseconds, as before) and `end.synchronize()` synchronizes the device if there is one.
    Only events bound to a plain local name and used in just these ways are rewritten; any other
    use leaves the event alone and reports it.
    """

    code = "TP010"
    mentions = rb"\bcuda\b"
    reads = (EVENT,)
    follows = rb"\bEvent\b"
    title = "CUDA events timed with the host clock"

    def __init__(self, context) -> None:
        super().__init__(context)
        self.events: list[cst.Assign] = []

    def visit_Assign(self, node: cst.Assign) -> None:  # noqa: N802
        if self.target.host_timing and isinstance(node.value, cst.Call) and self.qualified_name(node.value.func) == EVENT:
            self.events.append(node)

    def leave_Module(self, node: cst.Module) -> None:  # noqa: N802
        """Events are planned once the walk is over: their uses come after them."""
        for event in self.events:
            self._plan_event(event)

    def _plan_event(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            self.report(node, Operation.UNSUPPORTED, "an event not bound to a plain name: time it by hand", api=EVENT)
            return
        name = node.targets[0].target.value
        scope = self.scope(node)
        uses = [access.node for access in scope.accesses[name]] if scope is not None else []
        plan = [self._plan(use) for use in uses]
        if any(step is None for step in plan):
            self.report(node, Operation.UNSUPPORTED, f"event {name!r} is used in a way a host clock cannot replace", api=EVENT)
            return
        line = self.parent(node)
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            self.change(line, remove_statement, f"drop {EVENT}: timed with the host clock", operation=Operation.DELETE, api=EVENT)
        for fix_node, fix, message, needs in plan:
            if message:
                self.change(fix_node, fix, message, api=EVENT, needs=needs)

    def _is_elapsed_time_argument(self, use: cst.CSTNode) -> bool:
        arg = self.parent(use)
        call = self.parent(arg) if isinstance(arg, cst.Arg) else None
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "elapsed_time"
            and isinstance(call.func.value, cst.Name)
        )

    def _plan(self, use: cst.CSTNode):
        attribute = self.parent(use)
        if self._is_elapsed_time_argument(use):
            return (use, lambda updated: updated, "", "")  # the other event's rewrite covers it
        if not (isinstance(attribute, cst.Attribute) and attribute.value is use):
            return None
        call = self.parent(attribute)
        if not (isinstance(call, cst.Call) and call.func is attribute):
            return None
        method = attribute.attr.value
        name = use.value
        if method == "record":
            line = sole_statement(self, call)
            if line is None:
                return None
            # The host clock must be read after the device caught up, as the event would have been.
            source = "\n".join(filter(None, [self._synchronize_source(), f"{name} = time.perf_counter()"]))
            statements = cst.parse_module(source + "\n").body
            return (line, lambda _: cst.FlattenSentinel(statements), f"{name}.record() -> {source}", source)
        if method == "elapsed_time" and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name):
            source = f"({call.args[0].value.value} - {name}) * 1000"
            return (call, lambda _: parse_expression(source), f"{name}.elapsed_time() -> {source}", "")
        if method in ("synchronize", "wait"):
            line = sole_statement(self, call)
            if line is None:
                return None
            source = self._synchronize_source()
            if not source:
                return (line, remove_statement, f"drop {name}.{method}(): nothing to wait for", "")
            return (line, lambda _: cst.parse_statement(source), f"{name}.{method}() -> {source}", source)
        return None

    def _synchronize_source(self) -> str:
        """The target's `torch.cuda.synchronize()` as one statement, or "" where it is a no-op."""
        sync = self.target.verdict("torch.cuda.synchronize")
        if sync.kind is Kind.NOOP or sync.replacement is None:
            return ""
        if sync.guard:
            return f"if {sync.guard}:\n    {sync.replacement}()"
        return f"{sync.replacement}()"
