"""TP010: CUDA timing events on targets without usable events."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.nodes import parse_expression
from torchport.migrate.rules.base.rule import ApiReferenceRule
from torchport.migrate.rules.cuda_api import sole_statement, through_submodule
from torchport.targets.fallbacks import HOST_EVENT
from torchport.targets.verdict import Kind

EVENT = "torch.cuda.Event"


@dataclass(eq=False)
class _Binding:
    """An event bound to a plain local name, and how each of its uses reads the host clock."""

    name: str
    scope: object
    steps: list = field(default_factory=list)  # (node, fix, message, needs)
    partners: set = field(default_factory=set)  # (id of the scope, name) of the events it is timed against


@dataclass(eq=False)
class _Statement:
    """`start = Event(...)` or `start, end = Event(...), Event(...)`: its events go together."""

    line: cst.SimpleStatementLine | None  # None where the line holds other statements too
    bindings: list[_Binding]
    calls: list[cst.Call]


class HostTimingRule(ApiReferenceRule):
    """Time with the host clock where the target has no timing events (the CPU, or no accelerator).

    An event bound to a plain local name (`start = torch.cuda.Event(enable_timing=True)`, or
    `start, end = torch.cuda.Event(...), torch.cuda.Event(...)`) and used only in these ways is
    written as clock readings: the binding goes, `start.record()` becomes `start = time.perf_counter()`,
    `start.elapsed_time(end)` becomes `(end - start) * 1000` (milliseconds, as before) and
    `end.synchronize()` synchronizes the device if there is one. Any other event (kept in a list or
    a dict, in `self.start`, returned or passed on, timed against one of those) becomes a
    `HostEvent`, a small class with the event's methods that the target writes into the file.
    """

    code = "TP010"
    order = 140
    mentions = rb"\bcuda\b"
    prefix = EVENT
    reads = (EVENT,)
    follows = rb"\bEvent\b"
    title = "CUDA events timed with the host clock"
    readme = """CUDA timing events → the host clock where the target has none: an event bound to a plain name (`start =
    ...`, `start, end = ..., ...`) becomes readings (`start = time.perf_counter()`, `(end - start) * 1000`);
    one in a list, a dict, an attribute or passed on becomes a `HostEvent`, a host-clock event class written
    into the file"""
    sample = (
        "import torch\n"
        "start = torch.cuda.Event(enable_timing=True)\n"
        "end = torch.cuda.Event(enable_timing=True)\n"
        "start.record()\n"
        "end.record()\n"
        "end.synchronize()\n"
        "elapsed = start.elapsed_time(end)\n"
    )

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.host_timing

    def __init__(self, context) -> None:
        super().__init__(context)
        self.calls: list[cst.Call] = []
        self.references: list[cst.BaseExpression] = []

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if through_submodule(api) != EVENT:
            return
        parent = self.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            self.calls.append(parent)
        else:
            self.references.append(node)

    def leave_Module(self, node: cst.Module) -> None:  # noqa: N802
        """Events are planned once the walk is over: their uses come after them."""
        statements, others = self._statements()
        readings = self._clock_readings(statements)
        for statement in statements:
            if statement in readings:
                self._read_the_clock(statement)
            else:
                others.extend(statement.calls)
        for call in others:
            self._host_event(call.func)
        for reference in self.references:
            self._host_event(reference)

    # --- which events become clock readings -------------------------------------------------------
    def _statements(self) -> tuple[list[_Statement], list[cst.Call]]:
        """The statements that bind events to plain names, and the event calls bound otherwise."""
        statements, others, seen = [], [], set()
        for call in self.calls:
            assign, names, calls = self._binding_of(call)
            if assign is None:
                others.append(call)
            elif assign not in seen:
                seen.add(assign)
                line = self.parent(assign)
                single = isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
                scope = self.scope(assign)
                statements.append(_Statement(line if single else None, [_Binding(n, scope) for n in names], calls))
        return statements, others

    def _binding_of(self, call: cst.Call) -> tuple[cst.Assign | None, list[str], list[cst.Call]]:
        """(the assignment, its names, its event calls) where `call` is bound to a plain name,
        alone or in a tuple of events; (None, [], []) otherwise."""
        parent = self.parent(call)
        value = call if isinstance(parent, cst.Assign) else self.parent(parent)
        assign = self.parent(value)
        if not (isinstance(assign, cst.Assign) and assign.value is value and len(assign.targets) == 1):
            return None, [], []
        target = assign.targets[0].target
        if value is call:
            names, calls = [target], [call]
        elif isinstance(value, cst.Tuple) and isinstance(target, (cst.Tuple, cst.List)):
            names, calls = [e.value for e in target.elements], [e.value for e in value.elements]
        else:
            return None, [], []
        if len(names) != len(calls) or not all(isinstance(n, cst.Name) for n in names):
            return None, [], []
        if not all(isinstance(c, cst.Call) and c in self.calls for c in calls):
            return None, [], []
        return assign, [n.value for n in names], calls

    def _clock_readings(self, statements: list[_Statement]) -> set[_Statement]:
        """The statements whose events all become clock readings: each used only in the ways a
        reading replaces, and timed only against events that become readings too."""
        readings = {s for s in statements if s.line is not None and all(self._plan_binding(b) for b in s.bindings)}
        while True:
            read = {(id(b.scope), b.name) for s in readings for b in s.bindings}
            dropped = {s for s in readings if any(p not in read for b in s.bindings for p in b.partners)}
            if not dropped:
                return readings
            readings -= dropped

    def _plan_binding(self, binding: _Binding) -> bool:
        scope = binding.scope
        if scope is None or len(scope.assignments[binding.name]) != 1:
            return False  # (bound again somewhere: not one event)
        for access in scope.accesses[binding.name]:
            use = access.node
            if self.scope(use) is not scope:
                return False  # (a nested function's `start = ...` would bind its own name)
            step = self._plan(use, binding)
            if step is None:
                return False
            binding.steps.append(step)
        return True

    def _elapsed_time_call(self, use: cst.CSTNode) -> cst.Call | None:
        """The `x.elapsed_time(use)` call that `use` is the argument of, `x` a plain name."""
        arg = self.parent(use)
        call = self.parent(arg) if isinstance(arg, cst.Arg) else None
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "elapsed_time"
            and isinstance(call.func.value, cst.Name)
        ):
            return call
        return None

    def _plan(self, use: cst.CSTNode, binding: _Binding):
        """(node, fix, message, needs) for one use of an event, or None where a reading cannot do."""
        elapsed = self._elapsed_time_call(use)
        if elapsed is not None:
            binding.partners.add((id(self.scope(elapsed)), elapsed.func.value.value))
            return (use, lambda updated: updated, "", "")  # the other event's rewrite covers it
        attribute = self.parent(use)
        if not (isinstance(attribute, cst.Attribute) and attribute.value is use):
            return None
        call = self.parent(attribute)
        if not (isinstance(call, cst.Call) and call.func is attribute):
            return None
        method, name = attribute.attr.value, use.value
        if method == "record":
            return self._plan_record(call, name)
        if method == "elapsed_time" and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name):
            other = call.args[0].value.value
            binding.partners.add((id(self.scope(call)), other))
            source = f"({other} - {name}) * 1000"
            return (call, lambda _: parse_expression(source), f"{name}.elapsed_time() -> {source}", "")
        if method in ("synchronize", "wait"):
            return self._plan_wait(call, name, method)
        return None

    def _plan_record(self, call: cst.Call, name: str):
        line = sole_statement(self, call)
        if line is None:
            return None
        # The host clock must be read after the device caught up, as the event would have been.
        source = "\n".join(filter(None, [self._synchronize_source(), f"{name} = time.perf_counter()"]))
        statements = cst.parse_module(source + "\n").body
        return (line, lambda _: cst.FlattenSentinel(statements), f"{name}.record() -> {source}", source)

    def _plan_wait(self, call: cst.Call, name: str, method: str):
        line = sole_statement(self, call)
        if line is None:
            return None
        source = self._synchronize_source()
        if not source:
            return (line, remove_statement, f"drop {name}.{method}(): nothing to wait for", "")
        return (line, lambda _: cst.parse_statement(source), f"{name}.{method}() -> {source}", source)

    def _synchronize_source(self) -> str:
        """The target's `torch.cuda.synchronize()` as one statement, or "" where it is a no-op."""
        sync = self.target.verdict("torch.cuda.synchronize")
        if sync.kind is Kind.NOOP or sync.replacement is None:
            return ""
        if sync.guard:
            return f"if {sync.guard}:\n    {sync.replacement}()"
        return f"{sync.replacement}()"

    # --- the rewrites ---------------------------------------------------------------------------
    def _read_the_clock(self, statement: _Statement) -> None:
        self.change(statement.line, remove_statement, f"drop {EVENT}: timed with the host clock",
                    operation=Operation.DELETE, api=EVENT)
        for binding in statement.bindings:
            for fix_node, fix, message, needs in binding.steps:
                if message:
                    self.change(fix_node, fix, message, api=EVENT, needs=needs)

    def _host_event(self, node: cst.BaseExpression) -> None:
        self.change(node, lambda _: cst.Name(HOST_EVENT),
                    f"{EVENT} -> {HOST_EVENT}: an event on the host clock, defined in this file", api=EVENT,
                    needs=HOST_EVENT)
