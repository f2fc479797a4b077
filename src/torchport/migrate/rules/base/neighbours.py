"""The statements that run right before and right after another, as a person reads the code.

Used to tell a rewritten statement that repeats its neighbour (`torch.manual_seed(s)` then
`torch.cuda.manual_seed_all(s)`, both `torch.manual_seed(s)` off CUDA). A statement that is the
whole body of an `if` whose test does nothing but ask (`if torch.cuda.is_available():`) runs
right after the statement before that `if`.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

Parents = Callable[[cst.CSTNode], "cst.CSTNode | None"]


def previous_statement(statement: cst.BaseSmallStatement, parent: Parents, asks_only: Callable) -> cst.BaseSmallStatement | None:
    """The small statement that runs right before `statement`, where one does for sure."""
    line = parent(statement)
    if not isinstance(line, cst.SimpleStatementLine):
        return None
    index = _index(line.body, statement)
    if index > 0:
        return line.body[index - 1]
    block = parent(line)
    body = _statements(block)
    at = _index(body, line)
    if at > 0:
        before = body[at - 1]
        return before.body[-1] if isinstance(before, cst.SimpleStatementLine) else None
    owner = parent(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(owner, cst.If) and owner.orelse is None and len(body) == 1 and len(line.body) == 1 and asks_only(owner.test):
        return _statement_before(owner, parent)
    return None


def next_statement(statement: cst.BaseSmallStatement, parent: Parents) -> cst.BaseSmallStatement | None:
    """The small statement that runs right after `statement` in its own block, if any."""
    line = parent(statement)
    if not isinstance(line, cst.SimpleStatementLine):
        return None
    index = _index(line.body, statement)
    if index < len(line.body) - 1:
        return line.body[index + 1]
    body = _statements(parent(line))
    at = _index(body, line)
    after = body[at + 1] if 0 <= at < len(body) - 1 else None
    return after.body[0] if isinstance(after, cst.SimpleStatementLine) else None


def _statement_before(compound: cst.BaseCompoundStatement, parent: Parents) -> cst.BaseSmallStatement | None:
    body = _statements(parent(compound))  # (nothing for sure before an `elif`: its parent is the `if`)
    at = _index(body, compound)
    before = body[at - 1] if at > 0 else None
    return before.body[-1] if isinstance(before, cst.SimpleStatementLine) else None


def _statements(block: cst.CSTNode | None) -> list[cst.BaseStatement]:
    """The statements of a block (a module or an indented block); none for anything else that
    holds a statement, such as an `if` holding its `elif`."""
    return list(block.body) if isinstance(block, (cst.Module, cst.IndentedBlock)) else []


def _index(items, item) -> int:
    return next((i for i, candidate in enumerate(items) if candidate is item), -1)
