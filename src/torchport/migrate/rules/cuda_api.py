"""TP004: `torch.cuda.*` APIs, per the target's verdict."""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from torchport.apis.amp import CUDA_AMP as AMP
from torchport.apis.legacy_types import is_legacy_type
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import device_expression, is_device_value, quoted, string_value
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.neighbours import next_statement, previous_statement
from torchport.migrate.rules.base.nodes import (
    has_no_effect,
    only_when,
    parse_expression,
    run_only_when,
    source_of,
    with_arguments,
)
from torchport.migrate.rules.base.rule import ApiReferenceRule, Rule
from torchport.migrate.rules.is_available import AVAILABLE, asks_for_cuda_software
from torchport.migrate.rules.legacy_types import LegacyTypeUseRule, legacy_type_use
from torchport.targets.devices import any_device_source
from torchport.targets.fallbacks import TORCH_CLASSES
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind, Verdict

DEFAULT_TENSOR_TYPE = "torch.set_default_tensor_type"
FLOAT_TENSOR = "torch.cuda.FloatTensor"
CUDA_TYPE_PREFIX = "torch.cuda."
TYPE_METHOD = "type"  # x.type("torch.cuda.HalfTensor"), x.type() == "torch.cuda.HalfTensor"
REEXPORTING_SUBMODULES = {"memory", "random", "streams", "graphs"}


@lru_cache(maxsize=None)
def known_cuda_apis() -> frozenset[str]:
    """torch.cuda's public APIs, and torch's own classes that it re-exports (OutOfMemoryError)."""
    return frozenset(cuda_apis()) | {f"torch.cuda.{name}" for name in TORCH_CLASSES}


def through_submodule(api: str) -> str:
    """`torch.cuda.memory.empty_cache` is `torch.cuda.empty_cache`: torch.cuda re-exports the
    functions of these submodules, and its verdicts are written for the re-exported names."""
    parts = api.split(".")
    if len(parts) == 4 and parts[2] in REEXPORTING_SUBMODULES and f"torch.cuda.{parts[3]}" in known_cuda_apis():
        return f"torch.cuda.{parts[3]}"
    return api


def sole_statement(rule: Rule, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The statement line that consists of nothing but `call`, if there is one."""
    expr = rule.parent(call)
    if not isinstance(expr, cst.Expr):
        return None
    line = rule.parent(expr)
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return line
    return None


class CudaApiRule(ApiReferenceRule):
    """Rewrite `torch.cuda.<api>` (however it was imported) as the target's verdict says.

    same/adapted: call the replacement (guarded where the target may have no device);
    no-op: drop the statement, or use the verdict's value where the result is used;
    unsupported: leave it and report it; names no verdict knows: leave and report as unknown.
    AMP (`torch.cuda.amp.*`) and timing events have rules of their own.
    """

    code = "TP004"
    order = 70
    mentions = rb"\bcuda\b"
    title = "torch.cuda APIs"
    readme = """`torch.cuda.*`, however imported, per the target's verdict: same / adapted / no-op / unsupported; not
    guarded again under the script's own availability test; a seeding call that repeats its neighbour once
    rewritten (`torch.manual_seed(s)` then `torch.cuda.manual_seed_all(s)` off CUDA) goes;
    `torch.cuda.OutOfMemoryError` is `torch.OutOfMemoryError`"""
    sample = "import torch\ntorch.cuda.synchronize()\n"
    prefix = "torch.cuda"
    reads = (prefix, DEFAULT_TENSOR_TYPE)

    def visit_Comparison(self, node: cst.Comparison) -> None:  # noqa: N802
        """`x.type() == "torch.cuda.HalfTensor"`: the type name a tensor's .type() gives."""
        for operand in (node.left, *(target.comparator for target in node.comparisons)):
            if any(isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) for target in node.comparisons):
                self._type_name(operand, "compared with a tensor's type name")

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        """`torch.set_default_tensor_type("torch.cuda.FloatTensor")`: the type named in a string;
        `x.type("torch.cuda.HalfTensor")`."""
        if (isinstance(node.func, cst.Attribute) and node.func.attr.value == TYPE_METHOD and node.args
                and node.args[0].keyword in (None,) and self.qualified_name(node.func) is None):
            self._type_name(node.args[0].value, "a conversion to the type it names")
            return
        if not node.args or self.qualified_name(node.func) != DEFAULT_TENSOR_TYPE:
            return
        literal = node.args[0].value
        api = string_value(literal)
        if api is None:  # `torch.cuda.FloatTensor` itself: visit_api ports the name where it can
            if self.qualified_name(literal) == FLOAT_TENSOR and not self._has_own_class(FLOAT_TENSOR):
                self._default_device(node, FLOAT_TENSOR)
            return
        if api not in known_cuda_apis():
            return
        verdict = self.target.verdict(api)
        if self._has_own_class(api):
            new = quoted(literal, verdict.replacement)
            self.change(literal, lambda _: new, verdict.describe(), api=api)
        elif self._default_device(node, api):
            pass
        elif verdict.kind is Kind.ADAPTED and verdict.replacement:  # (a class chosen at run time: named, not spelled)
            replacement = verdict.replacement
            self.change(literal, lambda _: parse_expression(replacement), verdict.describe(), api=api, needs=replacement)
        else:
            self.report(literal, Operation.UNSUPPORTED, verdict.note, api=api)

    def _type_name(self, literal: cst.BaseExpression, use: str) -> None:
        """A legacy CUDA type named in a string (not set as the default): the target's own name
        for it where it has such classes (torch.HalfTensor on the CPU), else reported: a test
        against it would be false there, and the branch taken would change silently."""
        api = string_value(literal) if isinstance(literal, cst.SimpleString) else None
        if (api is None or not api.startswith(CUDA_TYPE_PREFIX) or not is_legacy_type(api[len(CUDA_TYPE_PREFIX):])
                or api not in known_cuda_apis()):
            return
        verdict = self.target.verdict(api)
        if self._has_own_class(api):
            if verdict.replacement != api:
                new = quoted(literal, verdict.replacement)
                self.change(literal, lambda _: new, f"type name {api!r} -> {new.value} ({use})", api=api)
            return
        self.report(literal, Operation.UNSUPPORTED, f"{api!r} as a string ({use}): {self.target.name} tensors have "
                    f"no such type name; test x.dtype and x.device.type instead", api=api)

    def _has_own_class(self, api: str) -> bool:
        """Whether the target has a class of its own for `api` (a legacy typed class), that a
        string can name: `torch.npu.FloatTensor`, `torch.FloatTensor` on the CPU."""
        verdict = self.target.verdict(api)
        return verdict.kind is Kind.SAME and verdict.replacement is not None

    def _default_device(self, call: cst.Call, api: str) -> bool:
        """Default float32 tensors on the device, where the target has no legacy typed classes."""
        if api != FLOAT_TENSOR:
            return False
        device = device_expression(self.target, None)
        new = f"torch.set_default_device({device})"
        self.change(call, lambda _: parse_expression(new), f"{api} as the default: {new}", api=api, needs=new)
        return True

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if api.startswith(AMP):
            return  # AmpRule
        if self._is_default_tensor_type(node):
            return  # visit_Call
        api = through_submodule(api)
        if api == self.prefix:
            self._module_value(node)
            return
        if api not in known_cuda_apis():
            self.report(node, Operation.UNKNOWN, f"{api} is not a public torch.cuda API; left as is", api=api)
            return
        if api == "torch.cuda.Event" and self.target.host_timing:
            return  # HostTimingRule
        verdict = self.target.verdict(api)
        parent = self.parent(node)
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        if api == AVAILABLE and call is not None and asks_for_cuda_software(self, call):
            return  # IsAvailableRule: kept, torch's honest answer for other software's CUDA build
        if verdict.kind is Kind.UNSUPPORTED:
            if LegacyTypeUseRule.applies_to(self.target) and legacy_type_use(self, node, api):
                return  # LegacyTypeUseRule writes the use without the class
            self.report(node, Operation.UNSUPPORTED, verdict.note, api=api)
        elif verdict.kind is Kind.NOOP:
            self._drop(node, call, verdict)
        elif call is not None:
            self._redirect_call(call, verdict)
        else:
            replacement = verdict.replacement
            self.change(node, lambda _: parse_expression(replacement), verdict.describe(), api=api, needs=replacement)

    def _module_value(self, node: cst.BaseExpression) -> None:
        """`torch.cuda` itself, as a value: the target's device module."""
        verdict = self.target.verdict(self.prefix)
        replacement = verdict.replacement
        self.change(node, lambda _: parse_expression(replacement), verdict.describe(), api=self.prefix, needs=replacement)

    def _is_default_tensor_type(self, node: cst.BaseExpression) -> bool:
        """`torch.set_default_tensor_type(torch.cuda.FloatTensor)` where the target has no such class."""
        if self.qualified_name(node) != FLOAT_TENSOR:
            return False
        argument = self.parent(node)
        call = self.parent(argument) if isinstance(argument, cst.Arg) else None
        if not (isinstance(call, cst.Call) and call.args and call.args[0] is argument):
            return False
        return not self._has_own_class(FLOAT_TENSOR) and self.qualified_name(call.func) == DEFAULT_TENSOR_TYPE

    def _done_already(self, call: cst.Call, verdict: Verdict) -> cst.Expr | None:
        """The statement that `call` is, where its neighbour does the same already: the statement
        before it, as written or once rewritten (`torch.manual_seed(s)` or `torch.cuda.manual_seed(s)`
        before `torch.cuda.manual_seed_all(s)`, all `torch.manual_seed(s)` off CUDA), or the
        statement after it as the script wrote it."""
        statement = self.parent(call)
        if not isinstance(statement, cst.Expr):
            return None
        before = previous_statement(statement, self.parent, has_no_effect)
        if self._calls(before, call, verdict, rewritten=True):
            return statement
        after = next_statement(statement, self.parent)
        return statement if self._calls(after, call, verdict, rewritten=False) else None

    def _calls(self, statement: cst.CSTNode | None, call: cst.Call, verdict: Verdict, rewritten: bool) -> bool:
        """Whether `statement` calls what `call` becomes, with the same arguments; `rewritten`:
        also where it is another CUDA API that becomes the same call."""
        if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)):
            return False
        other = statement.value
        name = self.qualified_name(other.func)
        if name is None:
            return False
        if name != verdict.replacement:
            name = through_submodule(name)
            if not (rewritten and name != verdict.api and name in known_cuda_apis()):
                return False
            becomes = self.target.verdict(name)
            if becomes.replacement != verdict.replacement or becomes.guard or becomes.drop_args or becomes.device_first:
                return False
        return source_of(other.with_changes(func=call.func)) == source_of(call)

    def _drop(self, node: cst.BaseExpression, call: cst.Call | None, verdict: Verdict) -> None:
        if call is None:
            self.report(node, Operation.UNSUPPORTED, f"{verdict.api} is a no-op on {self.target.name}: {verdict.note}", api=verdict.api)
            return
        line = sole_statement(self, call)
        if line is not None:
            self.change(line, remove_statement, verdict.describe(), operation=Operation.DELETE, api=verdict.api)
            return
        expression = self.parent(call)
        if isinstance(expression, cst.Expr):  # `x = 1; torch.cuda.synchronize()`: that statement alone
            self.change(self.parent(expression), _removing(expression), verdict.describe(),
                        operation=Operation.DELETE, api=verdict.api)
            return
        value = verdict.value if verdict.value is not None else "None"
        self.change(call, lambda _: parse_expression(value), verdict.describe(), api=verdict.api, needs=value)

    def _redirect_call(self, call: cst.Call, verdict: Verdict) -> None:
        repeated = self._done_already(call, verdict)
        if repeated is not None:
            self.change(self.parent(repeated), _removing(repeated), f"{verdict.describe()}; a statement beside it does it already",
                        operation=Operation.DELETE, api=verdict.api)
            return
        line = sole_statement(self, call)
        replacement = parse_expression(verdict.replacement)
        device = device_expression(self.target, None)

        as_index = self._as_index(call) if verdict.index_first else None

        def called(updated: cst.Call) -> cst.Call:
            new = updated.with_changes(func=replacement)
            if verdict.device_first:
                return with_arguments(new, before=[cst.Arg(parse_expression(device))])
            if as_index is not None and updated.args:
                first = updated.args[0]
                new = new.with_changes(args=[first.with_changes(value=parse_expression(as_index(source_of(first.value)))),
                                             *updated.args[1:]])
            return new.with_changes(args=[]) if verdict.drop_args else new

        def redirected(updated: cst.Call) -> cst.BaseExpression:
            if verdict.or_value is None:
                return called(updated)
            return cst.BooleanOperation(left=called(updated), operator=cst.Or(), right=parse_expression(verdict.or_value),
                                        lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

        index = as_index("0") if as_index is not None else ""  # (what the index's new spelling needs)
        if verdict.guard is None or (verdict.guard == self.target.guard and self.guarded_already(call)):
            needs = f"{verdict.replacement} {device if verdict.device_first else ''} {index}"
            self.change(call, redirected, verdict.describe(), api=verdict.api, needs=needs)
            return
        needs = f"{verdict.replacement} {verdict.guard} {verdict.value or ''} {index}"
        if line is not None:
            self.change(call, redirected, verdict.describe(), api=verdict.api, needs=needs)
            self.context.add_fix(line, run_only_when(verdict.guard), self.code)
            return
        fallback = parse_expression(verdict.value if verdict.value is not None else "None")

        def guarded_expression(updated: cst.Call) -> cst.IfExp:
            return only_when(verdict.guard, redirected(updated), fallback)

        self.change(call, guarded_expression, verdict.describe(), api=verdict.api, needs=needs)

    def _as_index(self, call: cst.Call):
        """How to spell the index of `call`'s first argument (any device, as CUDA takes it) for a
        replacement that takes an index only; None where it is an index already, or absent."""
        if not call.args or call.args[0].keyword is not None:
            return None
        value = call.args[0].value
        if isinstance(value, cst.Integer) or source_of(value) in ("None", *self.context.device_index_names):
            return None
        if isinstance(value, cst.Call) and is_device_value(value):
            return lambda source: f"{source}.index"
        if is_device_value(value) or source_of(value) in self.context.device_names:
            return lambda source: f"torch.device({source}).index"
        return lambda source: f"{any_device_source(self.target, source)}.index"


def _removing(statement: cst.Expr):
    """The fix of its statement line that removes `statement`: the whole line where it is alone."""
    return lambda line: remove_statement(line) if len(line.body) == 1 else _without_statement(line, statement)


def _without_statement(line: cst.SimpleStatementLine | cst.SimpleStatementSuite, statement: cst.Expr) -> cst.CSTNode:
    """`line` (or one-line suite) without `statement` (as it was before any fix), and no semicolon
    left dangling."""
    body = list(line.body)
    for index, candidate in enumerate(body):
        if candidate.deep_equals(statement):
            del body[index]
            break
    if not body:
        return remove_statement(line)
    body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return line.with_changes(body=body)
