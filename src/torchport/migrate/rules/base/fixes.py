"""The recorded fixes applied bottom-up, and what they leave tidied as a person would write it
(an `if` left with nothing to do goes, `c and True` is `c`, a removed statement's comments stay)."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.context import Fix
from torchport.migrate.rules.base.folding import folded_number, left_doing_nothing, number_value
from torchport.migrate.rules.base.nodes import has_no_effect


class ApplyFixes(cst.CSTTransformer):
    """Apply the rules' fixes bottom-up; never leave a block empty.

    Only the nodes on the way to a fix are entered (`parents` gives the way): the rest of the
    tree is kept as it is, unvisited."""

    def __init__(self, fixes: dict[cst.CSTNode, list[Fix]], parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.fixes = fixes
        self.removed: list[cst.CSTNode] = []  # nodes a fix removed whole (the fixes inside them came to nothing)
        self.on_the_way: set[cst.CSTNode] = set()
        for node in fixes:
            while node is not None and node not in self.on_the_way:
                self.on_the_way.add(node)
                node = parents.get(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.on_the_way and super().on_visit(node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        result = updated_node
        for fix in self.fixes.get(original_node, ()):
            result = fix(result)
            if not isinstance(result, cst.CSTNode) or isinstance(result, _RemovedStatement):
                self.removed.append(original_node)
                return result  # (gone: the leave_* tidying below is for the node's own kind)
        return super().on_leave(original_node, result)

    def leave_If(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`if torch.cuda.is_available(): <only no-ops>` (or any test without side effects, such as
        `if x.is_cuda:`) is dropped whole once its body is gone."""
        emptied = _only_pass(updated_node.body) and not _only_pass(original_node.body)
        if not (emptied and has_no_effect(updated_node.test)):
            return updated_node
        if updated_node.orelse is None:
            return remove_statement(updated_node)
        if isinstance(updated_node.orelse, cst.Else):  # `if c: pass else: b` is `if not c: b`
            return updated_node.with_changes(test=_negated(updated_node.test), body=updated_node.orelse.body, orelse=None)
        return updated_node

    def leave_IfExp(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`'cpu' if c else 'cpu'`, made by rewriting one branch into the other, is `'cpu'`."""
        if not isinstance(updated_node, cst.IfExp) or _same_value(original_node.body, original_node.orelse):
            return updated_node
        if not _same_value(updated_node.body, updated_node.orelse):
            return updated_node
        kept = updated_node.body
        atom = isinstance(kept, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.BaseNumber))
        if updated_node.lpar and not kept.lpar and not atom:  # (an atom needs no parentheses anywhere)
            kept = kept.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return kept

    def leave_BooleanOperation(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`c and True`, where a query became its constant answer, is `c` (and `c or False` too)."""
        if not isinstance(updated_node, cst.BooleanOperation):
            return updated_node
        neutral = "True" if isinstance(updated_node.operator, cst.And) else "False"
        for constant, kept, before in (
            (updated_node.right, updated_node.left, original_node.right),
            (updated_node.left, updated_node.right, original_node.left),
        ):
            if _is_name(constant, neutral) and not _is_name(before, neutral):
                if updated_node.lpar and not kept.lpar:
                    kept = kept.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
                return kept
        return updated_node

    def leave_BinaryOperation(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`0 / 2**20`, where a memory query became its answer, is `0.0` (the script's own
        arithmetic on constants stays as written)."""
        if not isinstance(updated_node, cst.BinaryOperation) or number_value(original_node) is not None:
            return updated_node
        return folded_number(updated_node) or updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """A statement the fixes left with nothing to do goes: `None` (a call that became its
        answer), `model = model` (a conversion that became its argument)."""
        if type(updated_node) is not cst.SimpleStatementLine:  # (a fix made it something else)
            return updated_node
        emptied = left_doing_nothing(original_node, updated_node)
        if not emptied:
            return updated_node
        body = [statement for statement in updated_node.body if not any(statement is e for e in emptied)]
        if not body:
            return remove_statement(updated_node)
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=body)

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802 (libcst API)
        body, footer = _without_removed(updated_node.body, updated_node.footer)
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=footer[: len(footer) - len(updated_node.footer)])]
            footer = updated_node.footer
        return updated_node.with_changes(body=body, footer=footer)

    def leave_Module(self, original_node, updated_node):  # noqa: N802 (libcst API)
        body, footer = _without_removed(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer)


class _RemovedStatement(cst.SimpleStatementLine):
    """Where a fix removed a statement that had comments above it: ApplyFixes drops it from its
    block and gives the comments to the statement that follows (or to the block's end)."""


def remove_statement(line: cst.BaseStatement | cst.SimpleStatementSuite) -> cst.CSTNode | cst.RemovalSentinel:
    """The fix that removes a statement line, keeping the comment lines above it; a one-line
    suite (`if prof: torch.cuda.nvtx.range_push("x")`) keeps its place with `pass` (an `if` left
    doing nothing then goes whole, as leave_If says)."""
    if isinstance(line, cst.SimpleStatementSuite):
        return line.with_changes(body=[cst.Pass()])
    if not any(empty.comment for empty in line.leading_lines):
        return cst.RemoveFromParent()
    return _RemovedStatement(body=[cst.Pass()], leading_lines=line.leading_lines)


def _without_removed(body, footer) -> tuple[list, list]:
    """(`body` without the removed statements, `footer`), their comments moved down."""
    kept, carried = [], []
    for line in body:
        if isinstance(line, _RemovedStatement):
            carried.extend(line.leading_lines)
            continue
        if carried:
            line = line.with_changes(leading_lines=[*carried, *line.leading_lines])
            carried = []
        kept.append(line)
    return kept, [*carried, *footer]


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """`not test`, or what `test` negates (`not c` gives `c`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    if isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not test.lpar:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=test)


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _same_value(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two expressions are the same text, string literals with the same value, or
    number literals with the same value (`0.0` and `0`)."""
    if isinstance(a, cst.SimpleString) and isinstance(b, cst.SimpleString):
        return a.prefix == b.prefix and a.evaluated_value == b.evaluated_value
    if isinstance(a, (cst.Integer, cst.Float)) and isinstance(b, (cst.Integer, cst.Float)):
        return a.evaluated_value == b.evaluated_value
    return a.deep_equals(b)


def _only_pass(block: cst.BaseSuite) -> bool:
    body = block.body
    if isinstance(block, cst.SimpleStatementSuite):
        return all(isinstance(s, cst.Pass) for s in body)
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body) for line in body)
