"""torch_npu's fused kernels (`torch_npu.npu_*`) as the torch code they compute (apis/npu_ops.py):
an inline template filled with the call's arguments, or the call pointed at the kernel's reference
function, written once into the file."""

from __future__ import annotations

import libcst as cst

from torchport.apis.npu_ops import LEFT_OUT, NPU_OPS, NpuOp, reference_source
from torchport.npu_to_cuda.edits import code
from torchport.targets import npu as npu_facts
from torchport.targets.base import modules_used

KERNEL_PREFIX = npu_facts.KERNEL_PREFIX
# Expressions that bind tighter than any operator: substituted or left in place without parentheses.
ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.ConcatenatedString,
         cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary, cst.List, cst.Tuple, cst.Dict, cst.Set,
         cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Ellipsis)
# Where an expression stands alone: no parentheses needed around what replaces a call there.
ALONE = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr, cst.Element, cst.DictElement,
         cst.Index, cst.WithItem, cst.IfExp, cst.Lambda)


def op_named(name: str) -> NpuOp | None:
    return NPU_OPS.get(name)


def is_kernel(name: str) -> bool:
    """A torch_npu kernel's name (npu_linear, fast_gelu), known to us or not."""
    return name in NPU_OPS or name in LEFT_OUT or name.startswith(KERNEL_PREFIX) or name in npu_facts.bare_kernels()


def why_left_out(name: str) -> str:
    return LEFT_OUT.get(name, "no torch computation known for this kernel")


def bind(op: NpuOp, args: list[cst.Arg], first: cst.BaseExpression | None = None) -> dict[str, cst.BaseExpression | str] | None:
    """parameter -> the expression the call passes (the default's source where it passes
    nothing); None where the arguments cannot be matched with confidence (*args, an unknown
    keyword, a parameter without default left out). `first`: a method call's receiver."""
    values: dict[str, cst.BaseExpression] = {}
    positional = [first] if first is not None else []
    for arg in args:
        if arg.star:
            return None
        if arg.keyword is None:
            if values:
                return None
            positional.append(arg.value)
        elif arg.keyword.value in op.parameters and arg.keyword.value not in values:
            values[arg.keyword.value] = arg.value
        else:
            return None
    if len(positional) > len(op.parameters):
        return None
    bound: dict[str, cst.BaseExpression | str] = dict(zip(op.parameters, positional))
    for name, value in values.items():
        if name in bound:
            return None
        bound[name] = value
    for name in op.parameters:
        if name not in bound:
            if name not in op.defaults:
                return None
            bound[name] = op.defaults[name]
    return bound


def template_for(op: NpuOp, bound: dict, first: bool) -> str | None:
    """The template that stands for this call (`first`: for `call[0]`), None where only the
    helper does: a literal-only template given anything else, a repeated argument that is not a
    plain name (it would be evaluated twice)."""
    template = op.inline_first if first else op.inline
    for parameter, by_literal in op.inline_when.items():
        given = bound.get(parameter)
        template = by_literal.get(given if isinstance(given, str) else code(given))
    if template is None:
        return None
    if any(not _plain(bound[name]) for name in op.repeated if f"{{{name}}}" in template):
        return None
    return template


def is_identity(op: NpuOp, bound: dict | None, target: cst.BaseExpression) -> bool:
    """Whether the call computes its first argument unchanged, and that argument is `target`."""
    if bound is None or template_for(op, bound, False) != f"{{{op.parameters[0]}}}":
        return False
    value = bound[op.parameters[0]]
    return not isinstance(value, str) and _plain(value) and code(value) == code(target)


def _plain(value) -> bool:
    while isinstance(value, cst.Attribute):
        value = value.value
    return isinstance(value, cst.Name) or isinstance(value, str) and value.isidentifier()


def sources(bound: dict) -> dict[str, str]:
    return {name: value if isinstance(value, str) else _operand(value) for name, value in bound.items()}


def _operand(value: cst.BaseExpression) -> str:
    text = code(value)
    return text if isinstance(value, ATOMS) or value.lpar else f"({text})"


def filled(template: str, bound: dict) -> cst.BaseExpression:
    return cst.parse_expression(template.format(**sources(bound)))


def standing(new: cst.BaseExpression, parent: cst.CSTNode | None) -> cst.BaseExpression:
    """`new` in parentheses where it takes the place of a call inside a larger expression."""
    if isinstance(new, ATOMS) or new.lpar or isinstance(parent, ALONE):
        return new
    return new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def modules_of_template(template: str, op: NpuOp) -> frozenset[str]:
    return modules_used(template.format(**{name: "(0)" for name in op.parameters}))  # (an argument reads no module)


def helper(name: str) -> tuple[str, frozenset[str]]:
    """The reference function's source, and the modules it reads."""
    source = reference_source(name)
    return source, modules_used(source)
