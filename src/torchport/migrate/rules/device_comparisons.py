"""TP013: comparisons and membership tests against `"cuda"`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.device_exprs import cuda_literal_index, device_expression, quoted
from torchport.migrate.rules.base.nodes import parse_expression, source_of
from torchport.migrate.rules.base.rule import Rule
from torchport.targets.devices import HOST_DEVICE_TYPE

EQUALITY = (cst.Equal, cst.NotEqual)
MEMBERSHIP = (cst.In, cst.NotIn)


def device_comparison(node: cst.Comparison) -> tuple[cst.SimpleString, cst.BaseExpression, cst.BaseCompOp] | None:
    """(the "cuda" literal, the other operand, the operator) of `x == "cuda"`, `"cuda" != x`,
    `x.device == torch.device("cuda")`, `"cuda" in x` or `"cuda" not in x`; None for anything
    else, chains included."""
    if len(node.comparisons) != 1:
        return None
    left, (target,) = node.left, node.comparisons
    operator, right = target.operator, target.comparator
    if isinstance(operator, EQUALITY):
        for literal, other in ((right, left), (left, right)):
            literal = device_call_literal(literal) or literal
            if cuda_literal_index(literal)[0]:
                return literal, other, operator
    elif isinstance(operator, MEMBERSHIP) and cuda_literal_index(left)[0]:
        return left, right, operator
    return None


def device_call_literal(node: cst.BaseExpression) -> cst.SimpleString | None:
    """The string of `torch.device("cuda")` (a call of something named `device` with one
    string), or None."""
    if not isinstance(node, cst.Call) or len(node.args) != 1 or node.args[0].keyword is not None:
        return None
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    value = node.args[0].value
    return value if name == "device" and isinstance(value, cst.SimpleString) else None


COLLECTIONS = (cst.Tuple, cst.List, cst.Set)
PREFIX_TESTS = ("startswith",)  # `str(device).startswith("cuda")`


def listed_device_literals(node: cst.Comparison) -> list[cst.SimpleString]:
    """The "cuda" literals of `x in ("cuda", "xpu")` or `x not in ["cuda", ...]`: a membership test
    against device types written out, which asks "is this one of these accelerators?"."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, MEMBERSHIP):
        return []
    collection = node.comparisons[0].comparator
    if not isinstance(collection, COLLECTIONS):
        return []
    return [e.value for e in collection.elements if isinstance(e, cst.Element) and cuda_literal_index(e.value)[0]]


def prefix_test_literal(call: cst.CSTNode | None) -> cst.SimpleString | None:
    """The "cuda" of `x.startswith("cuda")`, or None."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in PREFIX_TESTS
            and len(call.args) == 1 and call.args[0].keyword is None):
        return None
    value = call.args[0].value
    return value if cuda_literal_index(value)[0] and isinstance(value, cst.SimpleString) else None


class DeviceComparisonRule(Rule):
    """A comparison with `"cuda"` asks "are we on the accelerator?", and keeps its answer: true on
    the target's device, false on the CPU.

    `device_type == 'cuda'`, `"cuda" in str(device)` and their negations guard GPU-only work
    (pinned memory, fused optimizers, autocast). On a device target the literal names that
    device (`== 'npu'`); on the CPU target the test is left as it is, false as it should be,
    so that a script with its own CPU path takes it; on the device-agnostic target it holds
    only where `DEVICE_TYPE` is an accelerator: `device_type == DEVICE_TYPE != "cpu"`.

    A device type among others written out (`x in ("cuda", "xpu")`, `x not in ["cuda", "npu"]`) and
    a prefix test (`str(device).startswith("cuda")`) name the target's device on a device target;
    on the CPU and the device-agnostic targets they stay as written: CUDA's name is true on a CUDA
    host and false on the CPU, as the script meant.
    """

    code = "TP013"
    order = 30
    mentions = rb"[\"']cuda[\"':]"
    title = "comparisons with \"cuda\""
    readme = """comparisons with `"cuda"` (`device_type == 'cuda'`, `'cuda' in str(device)`, `x.device ==
    torch.device("cuda")`, negations) keep their answer: true on the target's device, false on the CPU"""
    sample = 'import torch\n\n\ndef on_gpu(x):\n    return x.device.type == "cuda"\n'

    def visit_Comparison(self, node: cst.Comparison) -> None:  # noqa: N802
        for literal in listed_device_literals(node):
            self._name_the_device(literal, "test for")
        found = device_comparison(node)
        if found is None or not self.target.has_device:
            return
        literal, other, operator = found
        target = self.target
        if not target.device_chosen_at_run_time:
            self._name_the_device(literal, "compare with")
            return
        if cuda_literal_index(literal)[1] is not None:
            return  # "cuda:1" against a device string: rare; TP001 spells the device
        device, cpu = target.device_type_expr, quoted(literal, HOST_DEVICE_TYPE).value
        call = node.comparisons[0].comparator if other is node.left else node.left
        if device_call_literal(call) is literal:  # device objects: compare them as device objects
            maker = source_of(call.func)
            device, cpu = f"{maker}({device})", f"{maker}({cpu})"
        if isinstance(operator, cst.Equal):
            template = f"_ == {device} != {cpu}"
        elif isinstance(operator, cst.NotEqual):
            template = f"_ != {device} or {device} == {cpu}"
        elif isinstance(operator, cst.In):
            template = f"{device} != {cpu} and {device} in _"
        else:
            template = f"{device} == {cpu} or {device} not in _"
        if not isinstance(operator, cst.Equal) and not self._stands_alone(node):
            template = f"({template})"

        def fix(updated: cst.Comparison) -> cst.BaseExpression:
            operand = updated.left if other is node.left else updated.comparisons[0].comparator
            new = parse_expression(template).visit(_Substitute(operand))
            return new.with_changes(lpar=[*updated.lpar, *new.lpar], rpar=[*new.rpar, *updated.rpar])

        self.change(
            node, fix, f'compare with {device}, which is "cpu" when no accelerator is present', needs=device
        )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        literal = prefix_test_literal(node)
        if literal is not None:
            self._name_the_device(literal, "test for")

    def _name_the_device(self, literal: cst.SimpleString, verb: str) -> None:
        """The literal names the target's device where that is known (a device target); left elsewhere."""
        if not self.target.has_device or self.target.device_chosen_at_run_time:
            return
        new = device_expression(self.target, cuda_literal_index(literal)[1], like=literal)
        self.change(literal, lambda _: parse_expression(new), f'{verb} {new} instead of "cuda"')

    def _stands_alone(self, node: cst.Comparison) -> bool:
        """Whether `node` can become an `and`/`or` expression without parentheses."""
        if node.lpar:
            return True
        parent = self.parent(node)
        if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.IfExp)):
            return parent.test is node
        return isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg))


class _Substitute(cst.CSTTransformer):
    """Put `operand` where the template says `_`."""

    def __init__(self, operand: cst.BaseExpression) -> None:
        super().__init__()
        self.operand = operand

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:  # noqa: N802
        return self.operand if original_node.value == "_" else updated_node
