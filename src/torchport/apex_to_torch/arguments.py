"""Reading a call's arguments by the parameters of the apex signature, and the literal values the
conversion can act on (an opt level, a loss scale, a flag)."""

from __future__ import annotations

import ast

import libcst as cst

from torchport.apex_to_torch.changes import Unconvertible
from torchport.distribute.edits import Read, code, dotted

NOT_KNOWN = object()  # a value that is not a literal


def bind(found: Read, call: cst.Call, parameters: tuple[str, ...]) -> dict[str, cst.Arg]:
    """parameter -> the argument passed for it (by place or by keyword)."""
    bound: dict[str, cst.Arg] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Unconvertible(found.line(call), f"{code(call.func)}(*...) / (**...): the arguments are not known")
        if arg.keyword is None:
            if index >= len(parameters):
                raise Unconvertible(found.line(call), f"{code(call.func)}: more arguments than apex takes")
            bound[parameters[index]] = arg
        else:
            bound[arg.keyword.value] = arg
    return bound


def literal(node: cst.BaseExpression, found: Read | None = None):
    """The value of a literal (numbers, strings, True/False/None, tuples, `2 ** 16`), or of a name
    bound once at the module's top level to one; NOT_KNOWN otherwise."""
    if isinstance(node, cst.Name) and found is not None and node.value not in ("True", "False", "None"):
        value = _module_constant(found, node.value)
        return NOT_KNOWN if value is None else literal(value)
    try:
        tree = ast.parse(code(node).strip(), mode="eval")
    except SyntaxError:
        return NOT_KNOWN
    allowed = (ast.Expression, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.operator,
               ast.unaryop, ast.Load)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return NOT_KNOWN
    try:
        return eval(compile(tree, "<literal>", "eval"), {"__builtins__": {}})  # noqa: S307 (constants only, checked above)
    except Exception:  # noqa: BLE001 (1/0 and the like: not a value the conversion can use)
        return NOT_KNOWN


def _module_constant(found: Read, name: str) -> cst.BaseExpression | None:
    """The value of `NAME = <literal>` when it is the module's only top-level assignment to `name`."""
    values = []
    for statement in found.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and any(dotted(t.target) == name for t in small.targets):
                    values.append(small.value)
    return values[0] if len(values) == 1 else None


def same_value(given: cst.BaseExpression, expected: str) -> bool:
    value = literal(given)
    return value is not NOT_KNOWN and value == ast.literal_eval(expected)


def elements(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """[a, b] -> [a, b]; a -> [a]."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return [e.value for e in node.elements]
    return [node]


def is_reference(node: cst.BaseExpression) -> bool:
    """A name or an attribute chain (`model`, `self.model`): what can be assigned and read again."""
    return dotted(node) is not None
