"""Small helpers that read and build CST nodes, for the rules and their fixes."""

from __future__ import annotations

import libcst as cst


_EMPTY_MODULE = cst.Module([])


def only_when(guard: str, value: cst.BaseExpression, otherwise: cst.BaseExpression) -> cst.IfExp:
    """`(value if guard else otherwise)`."""
    return cst.IfExp(test=parse_expression(guard), body=value, orelse=otherwise,
                     lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def and_also(value: cst.BaseExpression, condition: str) -> cst.BaseExpression:
    """`value and condition` (`True` becomes `condition`), parenthesised where `value` needs it."""
    if isinstance(value, cst.Name) and value.value == "True":
        return parse_expression(condition)
    if not value.lpar and not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=value, operator=cst.And(), right=parse_expression(condition))


def keyword_argument(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spaced as PEP 8 spaces keywords."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def run_only_when(guard: str):
    """The fix that runs a statement line only when `guard` holds (`if guard:` around it), the
    comments above it staying above the `if`."""

    def guarded(updated: cst.SimpleStatementLine) -> cst.If:
        inner = updated.with_changes(leading_lines=[])
        return cst.If(test=parse_expression(guard), body=cst.IndentedBlock([inner]), leading_lines=updated.leading_lines)

    return guarded


def source_of(node: cst.CSTNode) -> str:
    """The source text of one node, as LibCST would print it."""
    return _EMPTY_MODULE.code_for_node(node)


def dotted_name(node: cst.CSTNode) -> str | None:
    """`a.b.c` for a chain of names (None for anything else): what `source_of` gives for one,
    without printing it (which costs as much as printing a statement)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def has_no_effect(test: cst.BaseExpression) -> bool:
    """Whether evaluating `test` can do nothing but give a value: names, attributes, constants,
    comparisons and boolean operations of those, and the `is_available()` probes."""
    if isinstance(test, cst.Call):
        return not test.args and source_of(test.func).endswith("is_available")
    if isinstance(test, (cst.Name, cst.Integer, cst.SimpleString)):
        return True
    if isinstance(test, cst.Attribute):
        return has_no_effect(test.value)
    if isinstance(test, cst.UnaryOperation):
        return has_no_effect(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return has_no_effect(test.left) and has_no_effect(test.right)
    if isinstance(test, cst.Comparison):
        return has_no_effect(test.left) and all(has_no_effect(c.comparator) for c in test.comparisons)
    return False


def parse_expression(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


def call_argument(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument bound to `keyword` (or passed at `position`) in `call`, if any."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
        if position is not None and arg.keyword is None and not arg.star and index == position:
            return arg
    return None


def with_arguments(call: cst.Call, before: list[cst.Arg] = (), after: list[cst.Arg] = ()) -> cst.Call:
    """`call` with arguments added in front of and behind its own. The call's own commas (and the
    line breaks they carry) stay; a comma is added only where an argument now needs one."""
    args = [*before, *call.args, *after]
    separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return call.with_changes(
        args=[
            arg.with_changes(comma=separator) if i < len(args) - 1 and not isinstance(arg.comma, cst.Comma) else arg
            for i, arg in enumerate(args)
        ]
    )


def with_keyword(call: cst.Call, name: str, source: str) -> cst.Call:
    """`call` with `name=<source>` behind its arguments."""
    return with_arguments(call, after=[keyword_argument(name, parse_expression(source))])


def with_argument_and_also(call: cst.Call, arg: cst.Arg, condition: str) -> cst.Call:
    """`call` with the value of its argument `arg` ANDed with `condition` (`and_also`)."""
    return call.with_changes(args=[a.with_changes(value=and_also(a.value, condition)) if a is arg else a
                                   for a in call.args])


def without_arguments(call: cst.Call, keywords: set[str]) -> cst.Call:
    """`call` with the given keyword arguments removed (and a trailing comma tidied)."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value not in keywords]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
