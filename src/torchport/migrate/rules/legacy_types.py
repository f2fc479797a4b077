"""TP021: legacy CUDA tensor types where they are used, on a target that has no such classes."""

from __future__ import annotations

import libcst as cst

from torchport.apis.legacy_types import LEGACY_DTYPES
from torchport.migrate.rules.base.nodes import call_argument, parse_expression, source_of
from torchport.migrate.rules.base.rule import ApiReferenceRule, Rule
from torchport.targets.verdict import Kind

CUDA_TYPE = "torch.cuda."
# Where an `and` chain needs no parentheses: it is the whole test, value or argument.
WHOLE_EXPRESSION_HOLDERS = (
    cst.If, cst.While, cst.Assert, cst.Assign, cst.AnnAssign, cst.Return, cst.Arg, cst.Expr, cst.Element,
)


def legacy_dtype(api: str) -> str | None:
    """`torch.float32` for `torch.cuda.FloatTensor`; None for anything else (storages)."""
    return LEGACY_DTYPES.get(api[len(CUDA_TYPE):]) if api.startswith(CUDA_TYPE) else None


def legacy_type_use(rule: Rule, node: cst.BaseExpression, api: str) -> tuple[str, cst.Call] | None:
    """How `node` (a legacy CUDA tensor type) is used, where the use can be written without the
    class: ("construct", `T(...)`), ("convert", `x.type(T)`) or ("check", `isinstance(x, T)`,
    where `x` can be read again). None for any other use (a stored reference)."""
    if legacy_dtype(api) is None:
        return None
    parent = rule.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return "construct", parent
    if not isinstance(parent, cst.Arg):
        return None
    call = rule.parent(parent)
    if not isinstance(call, cst.Call):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "type":
        first = call_argument(call, "dtype", position=0)
        return ("convert", call) if first is parent else None
    if isinstance(func, cst.Name) and func.value == "isinstance" and len(call.args) == 2 and call.args[1] is parent:
        return ("check", call) if _read_again_safely(call.args[0].value) and call.args[0].keyword is None else None
    return None


def _read_again_safely(node: cst.BaseExpression) -> bool:
    """A name, an attribute or an item with a plain index: reading it again calls nothing."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _read_again_safely(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return _read_again_safely(node.value) and isinstance(index, (cst.Integer, cst.Name, cst.SimpleString))
    return False


class LegacyTypeUseRule(ApiReferenceRule):
    """Write each use of a legacy CUDA tensor type (`torch.cuda.FloatTensor`) without the class,
    on a target that has no typed classes (XPU, MPS), so that the use keeps its meaning there:

      torch.cuda.FloatTensor(2, 3)              -> torch.FloatTensor(2, 3).to("xpu")
      x.type(torch.cuda.LongTensor)             -> x.to("xpu", torch.int64)
      isinstance(x, torch.cuda.FloatTensor)     -> (isinstance(x, torch.Tensor) and x.device.type == "xpu" and x.dtype == torch.float32)

    The dtype is that of torch's class of the same name. A class held in a name or passed
    on is left to CudaApiRule, which reports it: no value can stand for it there (`x.type()`
    reads a class by its C name, and torch declares typed classes for CPU and CUDA only).
    """

    code = "TP021"
    order = 80
    mentions = rb"\bcuda\b"
    title = "legacy tensor types, by use"
    readme = """xpu, mps (no legacy typed classes): each use of `torch.cuda.FloatTensor` and the rest written without
    the class: `T(...)` → `torch.FloatTensor(...).to("xpu")`, `x.type(T)` → `x.to("xpu", torch.float32)`,
    `isinstance(x, T)` → a device-type and dtype test"""
    sample = "import torch\nlabels = torch.zeros(2).type(torch.cuda.LongTensor)\n"
    prefix = CUDA_TYPE
    reads = ("torch.cuda",)

    @classmethod
    def applies_to(cls, target) -> bool:
        return not target.device_chosen_at_run_time and target.has_device and target.verdict(f"{CUDA_TYPE}FloatTensor").kind is Kind.UNSUPPORTED

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        use = legacy_type_use(self, node, api)
        if use is None:
            return
        form, call = use
        dtype, device = legacy_dtype(api), f'"{self.target.device_type}"'
        if form == "construct":
            cpu_class = f"torch.{api[len(CUDA_TYPE):]}"
            fix, message = _constructed(cpu_class, device), f"{api}(...) -> {cpu_class}(...).to({device})"
        elif form == "convert":
            fix, message = _converted(device, dtype), f".type({api}) -> .to({device}, {dtype})"
        else:
            checked = source_of(call.args[0].value)
            new = f"isinstance({checked}, torch.Tensor) and {checked}.device.type == {device} and {checked}.dtype == {dtype}"
            if not isinstance(self.parent(call), WHOLE_EXPRESSION_HOLDERS):
                new = f"({new})"
            fix, message = (lambda _: parse_expression(new)), f"isinstance(..., {api}) -> the device type and dtype"
        self.change(call, fix, message, api=api, needs="torch.Tensor")


def _constructed(cpu_class: str, device: str):
    def fix(updated: cst.Call) -> cst.Call:
        made = updated.with_changes(func=parse_expression(cpu_class))
        return cst.Call(func=cst.Attribute(value=made, attr=cst.Name("to")), args=[cst.Arg(parse_expression(device))])

    return fix


def _converted(device: str, dtype: str):
    """`x.type(T, non_blocking=b)` -> `x.to(device, dtype, non_blocking=b)`."""

    def fix(updated: cst.Call) -> cst.Call:
        kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "dtype"]
        new = [cst.Arg(parse_expression(device)), cst.Arg(parse_expression(dtype))]
        if kept:
            new = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in new]
        else:
            new[0] = new[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to")), args=[*new, *kept])

    return fix
