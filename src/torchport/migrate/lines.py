"""The lines a few nodes span, found by printing the module once.

LibCST's PositionProvider records a line and column for every node, by splitting every token
it prints; a migration needs the lines of the handful of nodes it reports. This prints the
module with a state that counts newlines only when one of those nodes starts or ends, and
gives the same lines as PositionProvider (its syntactic positions).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState  # the hook LibCST's own position providers use

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


def node_lines(module: cst.Module, nodes: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """(first line, last line) of each of `nodes` in `module`, as LibCST's PositionProvider gives them."""
    if not nodes:
        return {}
    state = _LineCountingState(module, set(nodes))
    module._codegen(state)
    return {node: state.lines[node] for node in nodes if node in state.lines}
