"""The conversion's edits: fixes recorded against the nodes of the file as read (each a function of
the already updated node, applied bottom-up so that nested ones compose) and statements dropped,
their comments kept on the statement that follows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from torchport.findings import Code, Operation

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


@dataclass
class Row:
    line: int
    code: str
    operation: Operation
    message: str
    api: str = ""


@dataclass
class Edits:
    fixes: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = field(default_factory=dict)
    dropped: set[cst.CSTNode] = field(default_factory=set)  # small statements, statement lines, blocks' statements
    rows: list[Row] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)  # kernel -> its reference function's source
    modules: set[str] = field(default_factory=set)  # what the new code reads: "torch", "torchport.optim"

    def fix(self, node: cst.CSTNode, fix: Callable[[cst.CSTNode], cst.CSTNode]) -> None:
        before = self.fixes.get(node)
        self.fixes[node] = fix if before is None else (lambda updated: fix(before(updated)))

    def row(self, line: int, code_: Code, operation: Operation, message: str, api: str = "") -> None:
        self.rows.append(Row(line, code_.code, operation, message, api))

    def touched(self) -> set[cst.CSTNode]:
        return set(self.fixes) | self.dropped


class Apply(cst.CSTTransformer):
    """The recorded fixes and drops, applied to the tree they were recorded on."""

    def __init__(self, edits: Edits) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        fix = self.edits.fixes.get(original)
        return fix(updated) if fix is not None and isinstance(updated, cst.CSTNode) else updated

    def leave_SimpleStatementLine(self, original, updated):  # noqa: N802
        kept = [new for old, new in zip(original.body, updated.body) if old not in self.edits.dropped]
        if not kept:
            self.edits.dropped.add(original)
            return updated
        if len(kept) < len(updated.body):
            kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=kept)
        return updated

    def leave_Try(self, original, updated):  # noqa: N802
        """`try: import torch_npu` / `except ImportError: pass`, its import gone: the whole statement."""
        if (all(statement in self.edits.dropped for statement in original.body.body)
                and not original.orelse and not original.finalbody
                and all(_only_pass(handler.body) for handler in original.handlers)):
            self.edits.dropped.add(original)
        return updated

    def leave_IndentedBlock(self, original, updated):  # noqa: N802
        body, footer = self._kept(original.body, updated.body)
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=footer)]
            footer = []
        return updated.with_changes(body=body, footer=[*footer, *updated.footer])

    def leave_Module(self, original, updated):  # noqa: N802
        body, footer = self._kept(original.body, updated.body)
        if body and original.body and original.body[0] in self.edits.dropped and not updated.header:
            lines = list(body[0].leading_lines)  # (the file's first statement gone: no blank line opens it)
            while lines and lines[0].comment is None:
                lines.pop(0)
            body[0] = body[0].with_changes(leading_lines=lines)
        return updated.with_changes(body=body, footer=[*footer, *updated.footer])

    def _kept(self, originals, updates) -> tuple[list, list]:
        """The statements not dropped; the comments of dropped ones on the statement that follows
        (those after the last, as the block's footer)."""
        kept, pending = [], []
        for old, new in zip(originals, updates):
            if old in self.edits.dropped:
                pending += _comments_of(new)
                continue
            if pending:
                new = new.with_changes(leading_lines=[*pending, *new.leading_lines])
                pending = []
            kept.append(new)
        return kept, [line for line in pending if line.comment is not None]


def _comments_of(statement: cst.CSTNode) -> list[cst.EmptyLine]:
    lines = list(getattr(statement, "leading_lines", ()))
    trailing = getattr(statement, "trailing_whitespace", None)
    if trailing is not None and trailing.comment is not None:
        lines.append(cst.EmptyLine(comment=trailing.comment))
    if isinstance(statement, cst.BaseCompoundStatement):
        lines += [line for line in statement.body.footer if line.comment is not None] if hasattr(statement.body, "footer") else []
    return lines


def _only_pass(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body)
               for line in body)
