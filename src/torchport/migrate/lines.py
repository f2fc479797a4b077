"""The lines a few nodes span, found by printing only the statements that hold them.

LibCST's PositionProvider records a line and column for every node, by splitting every token
it prints; a migration needs the lines of the handful of nodes it reports. This prints the
top-level statements that hold those nodes (or the module, when their lines are not known)
with a state that counts newlines only when one of those nodes starts or ends, and gives the
same lines as PositionProvider (its syntactic positions).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState  # private: the hook PositionProvider uses (libcst bounded in pyproject)

_NEWLINE = re.compile(r"\r\n?|\n")


class _LineCountingState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.lines: dict[cst.CSTNode, tuple[int, int]] = {}
        self.syntactic: set[cst.CSTNode] = set()
        self._starts: dict[cst.CSTNode, int] = {}
        self._line = 1
        self._counted = 0  # tokens already counted into _line

    def _current_line(self) -> int:
        tokens = self.tokens
        if self._counted < len(tokens):
            self._line += len(_NEWLINE.findall("".join(tokens[self._counted :])))
            self._counted = len(tokens)
        return self._line

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self._starts[node] = self._current_line()

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            start = self._starts.pop(node)
            if node not in self.syntactic:  # a syntactic position, once recorded, is kept
                self.lines[node] = (start, self._current_line())

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        if node not in self.wanted:
            yield
            return
        for inner in (start_node, end_node):  # positions hoisted from these: count them too
            if inner is not None:
                self.wanted.add(inner)
        start = self._current_line()
        yield
        end = self._current_line()
        if start_node is not None:
            start = self.lines[start_node][0]
        if end_node is not None:
            end = self.lines[end_node][1]
        self.lines[node] = (start, end)
        self.syntactic.add(node)


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
        return _printed(module, module, set(nodes))
    held: dict[cst.CSTNode, set[cst.CSTNode]] = {}
    for node in nodes:
        top = node
        while parents.get(top) is not None and parents[top] is not module:
            top = parents[top]
        if top not in starts:  # (the module itself, or a node the walk did not reach)
            return _printed(module, module, set(nodes))
        held.setdefault(top, set()).add(node)
    lines = {}
    for statement, wanted in held.items():
        printed = _printed(module, statement, wanted | {statement})
        offset = starts[statement] - printed[statement][0]
        lines.update((node, (first + offset, last + offset)) for node, (first, last) in printed.items() if node in wanted)
    return lines


def _printed(module: cst.Module, node: cst.CSTNode, wanted: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """The lines of `wanted` when `node` (of `module`) is printed from line 1."""
    state = _LineCountingState(module, set(wanted))
    node._codegen(state)
    return {node: state.lines[node] for node in wanted if node in state.lines}


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
