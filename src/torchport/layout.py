"""Where each node of a LibCST tree sits, from one printing of the tree: its lines (as LibCST's
PositionProvider gives them: syntactic positions), its parent and its children in source order.

PositionProvider splits every token it prints to track columns, and ParentNodeProvider and a
node's `children` each walk the tree again; the rewriting steps ask only for lines and parents,
many times over a file. One print with a state that counts newlines and keeps a stack of the
nodes being printed answers all three for about a third of PositionProvider's cost. `wanted`
restricts the counting to a few nodes (the lines a migration reports), for less still.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState  # private: the hook PositionProvider uses (libcst bounded in pyproject)

_NEWLINE = re.compile(r"\r\n?|\n")


class LayoutState(CodegenState):
    """A printing state that records (first line, last line) of the nodes it prints (of `wanted`
    only, when given; then no parents or children are recorded)."""

    def __init__(self, module: cst.Module, wanted: set[cst.CSTNode] | None = None) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.lines: dict[cst.CSTNode, tuple[int, int]] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.children: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self.shared = False  # a node printed twice (a tree that holds one node in two places)
        self._syntactic: set[cst.CSTNode] = set()
        self._stack: list[tuple[cst.CSTNode, int]] = []
        self._line = 1
        self._counted = 0  # tokens already counted into _line

    def _current_line(self) -> int:
        tokens = self.tokens
        if self._counted < len(tokens):
            self._line += len(_NEWLINE.findall("".join(tokens[self._counted:])))
            self._counted = len(tokens)
        return self._line

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self.wanted is None:
            stack = self._stack
            if stack:
                parent = stack[-1][0]
                if node in self.parents:
                    self.shared = True
                self.parents[node] = parent
                self.children[parent].append(node)
            self.children[node] = []
            stack.append((node, self._current_line()))
        elif node in self.wanted:
            self._stack.append((node, self._current_line()))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self.wanted is None or node in self.wanted:
            start = self._stack.pop()[1]
            if node not in self._syntactic:  # a syntactic position, once recorded, is kept
                self.lines[node] = (start, self._current_line())

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> Iterator[None]:
        if self.wanted is not None:
            if node not in self.wanted:
                yield
                return
            self.wanted.update(inner for inner in (start_node, end_node) if inner is not None)  # (hoisted from these)
        start = self._current_line()
        yield
        end = self._current_line()
        if start_node is not None:
            start = self.lines[start_node][0]
        if end_node is not None:
            end = self.lines[end_node][1]
        self.lines[node] = (start, end)
        self._syntactic.add(node)


class Layout:
    """Lines, parents and children of every node of `module`, and its code, from one printing."""

    def __init__(self, module: cst.Module) -> None:
        state = LayoutState(module)
        module._codegen(state)
        self.code = "".join(state.tokens)
        self.lines = state.lines
        self.parents = state.parents
        self.children = state.children
        self.shared = state.shared


def printed_lines(module: cst.Module, node: cst.CSTNode, wanted: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """The lines of `wanted` when `node` (of `module`) is printed from line 1."""
    state = LayoutState(module, set(wanted))
    node._codegen(state)
    return {node: state.lines[node] for node in wanted if node in state.lines}
