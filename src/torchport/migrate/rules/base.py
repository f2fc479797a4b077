"""What every rule shares: one traversal, findings instead of edits, and the edits kept apart.

Rules are `libcst.BatchableCSTVisitor`s, so all of them share a single walk of a file. A rule
never edits the tree: it records a `Finding` and, for a change, a *fix*: a function from the
(already updated) node to its replacement. `apply_fixes` runs them bottom-up, so fixes on nested
nodes compose.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Union

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from torchport.migrate.findings import Finding, Operation
from torchport.targets import Target

Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]
Fix = Callable[[cst.CSTNode], Replacement]


@dataclass
class FileContext:
    """State the rules of one file share: the target, findings, fixes and what the file now needs."""

    target: Target
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixes: dict[cst.CSTNode, list[Fix]] = field(default_factory=lambda: defaultdict(list))
    needed_imports: set[str] = field(default_factory=set)  # modules the rewritten code refers to
    needs_preamble: bool = False  # the target's device-type preamble is referred to

    def need_expression(self, source: str) -> None:
        """Record the imports and preamble that a piece of generated code relies on."""
        if self.target.preamble and self.target.device_type_expr and self.target.device_type_expr in source:
            self.needs_preamble = True
        for token in source.replace("(", " ").replace(")", " ").split():
            root = token.split(".")[0]
            if "." in token and root.isidentifier():
                self.needed_imports.add(token.rsplit(".", 1)[0] if root != "torch" else "torch")


class Rule(cst.BatchableCSTVisitor):
    """A rewrite rule. Subclasses set `code` and write their docstring as the rule's description."""

    code: ClassVar[str] = ""
    title: ClassVar[str] = ""  # a few words for the terminal summary
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)

    def __init__(self, context: FileContext) -> None:
        super().__init__()
        self.context = context
        self.target = context.target

    # --- reading -------------------------------------------------------------------------
    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """The fully qualified name `node` refers to (`tc.synchronize` -> `torch.cuda.synchronize`)."""
        inner = node
        while isinstance(inner, cst.Attribute):
            inner = inner.value
        if not isinstance(inner, cst.Name):  # `f().x` names an attribute of a result, not an API
            return None
        names = self.get_metadata(QualifiedNameProvider, node, set())
        if not names and inner.value == "torch":
            # `torch` used without being imported (the file relies on a star import, or is broken):
            # read the name as written, so that a second pass, after we add `import torch`, agrees.
            return source_of(node)
        torch_names = sorted(n.name for n in names if n.name.startswith("torch"))
        return torch_names[0] if torch_names else None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.get_metadata(PositionProvider, node, None)
        if position is None:
            return (0, 0)
        return (position.start.line, position.end.line)

    # --- recording -----------------------------------------------------------------------
    def change(
        self,
        node: cst.CSTNode,
        fix: Fix,
        message: str,
        *,
        operation: Operation = Operation.MODIFY,
        api: str = "",
        needs: str = "",
    ) -> None:
        """Record an edit of `node` (and a change_list row). `needs`: the generated source."""
        self.context.fixes[node].append(fix)
        if needs:
            self.context.need_expression(needs)
        self.report(node, operation, message, api=api)

    def report(self, node: cst.CSTNode, operation: Operation, message: str, *, api: str = "") -> None:
        start, end = self.lines(node)
        self.context.findings.append(
            Finding(self.context.path, start, end, self.code, operation, message, api)
        )


class ApiReferenceRule(Rule):
    """A rule about references to APIs under `prefix`, however they were imported.

    It sees each whole dotted name once (`tc.synchronize`, not also `tc`), never the names
    inside import statements, and never attributes of call results.
    """

    prefix: ClassVar[str] = ""

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        self._visit_reference(node)

    def visit_Name(self, node: cst.Name) -> None:  # noqa: N802
        self._visit_reference(node)

    def _visit_reference(self, node: cst.BaseExpression) -> None:
        api = self.qualified_name(node)
        if api is None or not api.startswith(self.prefix):
            return
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # part of a longer dotted name: that one is visited
        while isinstance(parent, (cst.Attribute, cst.Name)):
            parent = self.parent(parent)
        if isinstance(parent, (cst.ImportAlias, cst.ImportFrom, cst.Import)):
            return
        self.visit_api(node, api)

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        raise NotImplementedError


class ApplyFixes(cst.CSTTransformer):
    """Apply the rules' fixes bottom-up; never leave a block empty."""

    def __init__(self, fixes: dict[cst.CSTNode, list[Fix]]) -> None:
        super().__init__()
        self.fixes = fixes

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        result = updated_node
        for fix in self.fixes.get(original_node, ()):
            result = fix(result)
            if not isinstance(result, cst.CSTNode):
                return result
        return super().on_leave(original_node, result)

    def leave_If(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`if torch.cuda.is_available(): <only no-ops>` is dropped whole once its body is gone."""
        emptied = _only_pass(updated_node.body) and not _only_pass(original_node.body)
        test = updated_node.test
        probe = isinstance(test, cst.Call) and not test.args and source_of(test.func).endswith("is_available")
        if emptied and probe and updated_node.orelse is None:
            return cst.RemoveFromParent()
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802 (libcst API)
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


_EMPTY_MODULE = cst.Module([])


def source_of(node: cst.CSTNode) -> str:
    """The source text of one node, as LibCST would print it."""
    return _EMPTY_MODULE.code_for_node(node)


def _only_pass(block: cst.BaseSuite) -> bool:
    body = block.body
    if isinstance(block, cst.SimpleStatementSuite):
        return all(isinstance(s, cst.Pass) for s in body)
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body) for line in body)


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


def without_arguments(call: cst.Call, keywords: set[str]) -> cst.Call:
    """`call` with the given keyword arguments removed (and a trailing comma tidied)."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value not in keywords]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
