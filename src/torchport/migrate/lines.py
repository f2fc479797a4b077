"""The lines a few nodes span, found by printing only the statements that hold them.

LibCST's PositionProvider records a line and column for every node, by splitting every token
it prints; a migration needs the lines of the handful of nodes it reports. This prints the
top-level statements that hold those nodes (or the module, when their lines are not known)
with a state that counts newlines only when one of those nodes starts or ends, and gives the
same lines as PositionProvider (its syntactic positions).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from torchport.layout import printed_lines


def node_lines(
    module: cst.Module,
    nodes: set[cst.CSTNode],
    statement_lines: Sequence[int] | None = None,
    parents: dict[cst.CSTNode, cst.CSTNode] | None = None,
) -> dict[cst.CSTNode, tuple[int, int]]:
    """(first line, last line) of each of `nodes` in `module`, as LibCST's PositionProvider gives them.

    With `statement_lines` (the line of each top-level statement, as `ast` numbers them: the
    `def` line of a decorated function) and the nodes' `parents`, only the top-level statements
    that hold one of `nodes` are printed: their own first line places them in the file."""
    if not nodes:
        return {}
    starts = _statement_starts(module, statement_lines) if statement_lines is not None and parents else None
    if starts is None:
        return printed_lines(module, module, set(nodes))
    held: dict[cst.CSTNode, set[cst.CSTNode]] = {}
    for node in nodes:
        top = node
        while parents.get(top) is not None and parents[top] is not module:
            top = parents[top]
        if top not in starts:  # (the module itself, or a node the walk did not reach)
            return printed_lines(module, module, set(nodes))
        held.setdefault(top, set()).add(node)
    lines = {}
    for statement, wanted in held.items():
        printed = printed_lines(module, statement, wanted | {statement})
        offset = starts[statement] - printed[statement][0]
        lines.update((node, (first + offset, last + offset)) for node, (first, last) in printed.items() if node in wanted)
    return lines


def _statement_starts(module: cst.Module, statement_lines: Sequence[int]) -> dict[cst.CSTNode, int] | None:
    """Each top-level statement of `module` with the line it starts on, from `ast`'s numbering
    (which counts `a; b` as two statements); None if the two parses do not line up."""
    starts, index = {}, 0
    for statement in module.body:
        if index >= len(statement_lines):
            return None
        starts[statement] = statement_lines[index]
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return starts if index == len(statement_lines) else None
