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
    """A printing state that records (first line, last line) of the `wanted` nodes it prints,
    counting newlines only when one of them starts or ends."""

    def __init__(self, module: cst.Module, wanted: set[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.lines: dict[cst.CSTNode, tuple[int, int]] = {}
        self._syntactic: set[cst.CSTNode] = set()
        self._starts: list[int] = []
        self._line = 1
        self._counted = 0  # tokens already counted into _line

    def _current_line(self) -> int:
        tokens = self.tokens
        if self._counted < len(tokens):
            self._line += len(_NEWLINE.findall("".join(tokens[self._counted:])))
            self._counted = len(tokens)
        return self._line

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self._starts.append(self._current_line())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            start = self._starts.pop()
            if node not in self._syntactic:  # a syntactic position, once recorded, is kept
                self.lines[node] = (start, self._current_line())

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> Iterator[None]:
        if node not in self.wanted:
            yield
            return
        self.wanted.update(inner for inner in (start_node, end_node) if inner is not None)  # (hoisted from these)
        start = self._current_line()
        yield
        _record(self, node, start, self._current_line(), start_node, end_node)


def _record(state, node: cst.CSTNode, start: int, end: int, start_node: cst.CSTNode | None,
            end_node: cst.CSTNode | None) -> None:
    """A syntactic position: its start and end hoisted from `start_node` and `end_node` where given."""
    if start_node is not None:
        start = state.lines[start_node][0]
    if end_node is not None:
        end = state.lines[end_node][1]
    state.lines[node] = (start, end)
    state._syntactic.add(node)


class _EveryNode(CodegenState):
    """The state for every node: its lines, parent and children, and the order nodes are printed
    in. It counts newlines as tokens are added (every node asks the line), and records syntactic
    positions without a generator (LibCST asks for one at most nodes)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.lines: dict[cst.CSTNode, tuple[int, int]] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.children: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self.order: list[cst.CSTNode] = []  # every node, in the order printed (a walk's order)
        self._syntactic: set[cst.CSTNode] = set()
        self._open: list[tuple[cst.CSTNode, list[cst.CSTNode], int]] = []  # (node, its children so far, first line)
        self._line = 1

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            self._line += len(_NEWLINE.findall(value))

    def before_codegen(self, node: cst.CSTNode) -> None:
        kids: list[cst.CSTNode] = []
        self.children[node] = kids
        self.order.append(node)
        if self._open:
            parent = self._open[-1]
            self.parents[node] = parent[0]
            parent[1].append(node)
        self._open.append((node, kids, self._line))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._open.pop()[2]
        if node not in self._syntactic:  # a syntactic position, once recorded, is kept
            self.lines[node] = (start, self._line)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """`with state.record_syntactic_position(node):` for _EveryNode."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _EveryNode, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state._line

    def __exit__(self, *raised) -> bool:
        _record(self.state, self.node, self.start, self.state._line, self.start_node, self.end_node)
        return False


class Layout:
    """Lines, parents and children of every node of `module`, the order they are printed in (a
    walk's), and its code, from one printing."""

    def __init__(self, module: cst.Module) -> None:
        state = _EveryNode(module)
        module._codegen(state)
        self.module = module
        self.code = "".join(state.tokens)
        self.lines = state.lines
        self.parents = state.parents
        self.children = state.children
        self.order = state.order
        self.shared = len(state.order) > len(state.children)  # (a tree that holds one node in two places)


def printed_lines(module: cst.Module, node: cst.CSTNode, wanted: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """The lines of `wanted` when `node` (of `module`) is printed from line 1."""
    state = LayoutState(module, set(wanted))
    node._codegen(state)
    return {node: state.lines[node] for node in wanted if node in state.lines}
