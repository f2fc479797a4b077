"""What a fix can leave behind that a person would not write, and what they would write instead.

A query the target answers with a constant (`torch.cuda.max_memory_allocated()` is 0 on the CPU)
leaves arithmetic on constants (`0 / 2**20`, which is `0.0`); a call that does nothing there
leaves a statement with nothing to do (`None`, `model = model`). ApplyFixes asks these helpers
about what the fixes made, never about what the script wrote itself.
"""

from __future__ import annotations

import math
import operator

import libcst as cst

_ARITHMETIC = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.Divide: operator.truediv,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}
_LARGEST_EXPONENT = 64  # (`2**20` is a size; a larger power is nothing a query's answer meets)
_CONSTANT_NAMES = ("None", "True", "False")


def number_value(node: cst.BaseExpression) -> int | float | None:
    """The value of arithmetic on number literals (`0 / 2**20`), or None for anything else."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if not isinstance(node, cst.BinaryOperation) or type(node.operator) not in _ARITHMETIC:
        return None
    left, right = number_value(node.left), number_value(node.right)
    if left is None or right is None:
        return None
    if isinstance(node.operator, cst.Power) and abs(right) > _LARGEST_EXPONENT:
        return None
    try:
        return _ARITHMETIC[type(node.operator)](left, right)
    except (ArithmeticError, ValueError):  # (`x / 0`: left for the script to raise)
        return None


def folded_number(node: cst.BinaryOperation) -> cst.BaseExpression | None:
    """The literal that arithmetic on number literals comes to (`0 / 2**20` is `0.0`), or None
    where it is not such arithmetic or its value is not one plain literal (negative, inf, complex)."""
    value = number_value(node)
    if value is None or isinstance(value, complex) or value < 0 or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if isinstance(value, float):
        return cst.Float(repr(value))  # (`0.0.real` reads as it should: no parentheses needed)
    return cst.Integer(repr(value), lpar=node.lpar, rpar=node.rpar)  # (`(0).real`: kept where written)


def is_constant(node: cst.BaseExpression) -> bool:
    """A literal: a number, a string, `None`, `True`, `False`, `...`."""
    if isinstance(node, cst.Name):
        return node.value in _CONSTANT_NAMES
    return isinstance(node, (cst.BaseNumber, cst.BaseString, cst.Ellipsis))


def does_nothing(statement: cst.BaseSmallStatement) -> bool:
    """A statement with nothing to do: a bare constant (`None`), or a name or attribute
    assigned to itself (`model = model`)."""
    if isinstance(statement, cst.Expr):
        return is_constant(statement.value)
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        return isinstance(target, (cst.Name, cst.Attribute)) and target.deep_equals(statement.value)
    return False


def left_doing_nothing(original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> list[cst.BaseSmallStatement]:
    """The statements of `updated` that its fixes left with nothing to do: those the script
    wrote so itself (a docstring, `...`) are not among them."""
    written = [statement for statement in original.body if does_nothing(statement)]
    emptied = []
    for statement in updated.body:
        if not does_nothing(statement):
            continue
        same = next((i for i, mine in enumerate(written) if mine.deep_equals(statement)), None)
        if same is None:
            emptied.append(statement)
        else:
            del written[same]
    return emptied
