"""Where each node of a LibCST tree sits, from one printing of the tree: its lines (as LibCST's
PositionProvider gives them: syntactic positions), its parent and its children in source order.

PositionProvider splits every token it prints to track columns, and ParentNodeProvider and a
node's `children` each walk the tree again; the rewriting steps ask only for lines and parents,
many times over a file. One print with a state that counts newlines and keeps a stack of the
nodes being printed answers all three for about a third of PositionProvider's cost. `wanted`
restricts the counting to a few nodes (the lines a migration reports), for less still.

A tree that edits made from a laid-out one shares every node the edits left alone (LibCST's
nodes never change). Its layout (`Layout(made, base)`) prints only what the edits rebuilt: each
untouched statement met where it printed before is taken from the base layout whole, its text
copied, its nodes' lines, parents and children looked up there and moved. Skipping a node's
printing takes its parent's call to `node._codegen`, which LibCST gives no hook for: while such a
layout prints, `CSTNode._codegen` is one that asks the state first (`_reusing`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import accumulate
from typing import NamedTuple

import libcst as cst
from libcst._nodes.internal import CodegenState  # private: the hook PositionProvider uses (libcst bounded in pyproject)

_NEWLINE = re.compile(r"\r\n?|\n")
_LAST_NEWLINE = re.compile(r"(\r\n?|\n)\Z")
# What a made tree may take whole from the tree it was made from: statements and the blocks and
# clauses that hold them. (An edit rebuilds the statement it is in, which is printed again; an
# expression's pieces are too small to be worth keeping where they lie.)
REUSABLE = frozenset({cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef, cst.If, cst.For, cst.While, cst.Try,
                      cst.TryStar, cst.With, cst.Match, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
                      cst.Finally, cst.IndentedBlock, cst.SimpleStatementSuite, cst.Decorator, cst.MatchCase,
                      cst.EmptyLine})
# Whose subtree a layout records the place of (`Layout.extent`): what it may take whole, and the
# scopes a walk that stays out of nested scopes steps over (a lambda is the one not above).
_EXTENDED = REUSABLE | {cst.Lambda}


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
    positions without a generator (LibCST asks for one at most nodes). It also keeps where each
    node's text lies (`Span`), so that a tree made from this one can take an untouched node's
    text, lines and order from here rather than print it again (`Layout(made, base=this)`)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.lines: dict[cst.CSTNode, tuple[int, int]] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.children: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self.order: list[cst.CSTNode] = []  # every node, in the order printed (a walk's order)
        # a statement -> (order index, after it, token index, after it, first line, last line, indentation)
        self.spans: dict[cst.CSTNode, tuple[int, int, int, int, int, int, str]] = {}
        self.popped = ""  # the module's last newline, which LibCST takes off a file that has none
        self._syntactic: set[cst.CSTNode] = set()
        self._open: list[tuple] = []  # (node, its children so far, first line[, order index, token index, indentation])
        self._line = 1
        self._indent = ""  # the indentation tokens, joined
        self._indents: list[str] = []

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            self._line += len(_NEWLINE.findall(value))

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        self._indents.append(self._indent)
        self._indent += value

    def decrease_indent(self) -> None:
        self.indent_tokens.pop()
        self._indent = self._indents.pop()

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        kids: list[cst.CSTNode] = []
        self.children[node] = kids
        if self._open:
            parent = self._open[-1]
            self.parents[node] = parent[0]
            parent[1].append(node)
        if type(node) in _EXTENDED:
            self._open.append((node, kids, self._line, len(self.order), len(self.tokens), self._indent))
        else:
            self._open.append((node, kids, self._line))
        self.order.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        opened = self._open.pop()
        if node not in self._syntactic:  # a syntactic position, once recorded, is kept
            self.lines[node] = (opened[2], self._line)
        if len(opened) > 3:
            self.spans[node] = (opened[3], len(self.order), opened[4], len(self.tokens), opened[2], self._line, opened[5])

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class Span(NamedTuple):
    """Where a node's text lies in a printing: its nodes (order[first:last]), its text
    (text[start:end]), the lines its text runs over, and the indentation it was printed at."""

    first: int
    last: int
    start: int
    end: int
    line: int
    end_line: int
    indent: str

    def moved(self, nodes: int, chars: int, lines: int) -> "Span":
        return Span(self.first + nodes, self.last + nodes, self.start + chars, self.end + chars, self.line + lines,
                    self.end_line + lines, self.indent)


class _Splicing(_EveryNode):
    """The state for a tree made from `base`'s by edits: a node of `base`'s tree, met where it
    would print as it did (at the same indentation, with no argument from its parent such as a
    default comma), is not printed again: its text, nodes and lines are `base`'s, moved."""

    def __init__(self, module: cst.Module, base: "Layout") -> None:
        super().__init__(module)
        self.base = base
        self.parents = dict(base.parents)  # (the nodes of a reused subtree keep their parents and children)
        self.children = dict(base.children)
        self.roots: dict[cst.CSTNode, tuple[int, int, int]] = {}  # reused node -> (nodes, chars, lines) it moved by
        self.printed: list[cst.CSTNode] = []
        self.twice = False
        self._chars = 0  # (counted here only: a full printing turns token indices into offsets when asked)

    def add_token(self, value: str) -> None:
        super().add_token(value)
        self._chars += len(value)

    def add_indent_tokens(self) -> None:
        super().add_indent_tokens()
        self._chars += len(self._indent)

    def before_codegen(self, node: cst.CSTNode) -> None:
        super().before_codegen(node)
        self.printed.append(node)

    def reuse(self, node: cst.CSTNode) -> bool:
        span = self.base.span(node)
        if span is None or span.indent != self._indent or not self._open:
            return False
        parent = self._open[-1]
        self.parents[node] = parent[0]
        parent[1].append(node)
        moved = (len(self.order) - span.first, self._chars - span.start, self._line - span.line)
        if node in self.roots:
            self.twice = True  # (the tree holds it in two places)
        else:
            self.roots[node] = moved
        first, token, line = len(self.order), len(self.tokens), self._line
        self.order.extend(self.base.order[span.first:span.last])
        text = self.base.text[span.start:span.end]
        newline = _LAST_NEWLINE.search(text)
        if newline is None:
            self.tokens.append(text)
        else:  # (its own token, as when it was printed: the module takes a file's last newline off)
            self.tokens += (text[:newline.start()], newline.group())
        self._chars += span.end - span.start
        self._line += span.end_line - span.line
        self.spans[node] = (first, len(self.order), token, len(self.tokens), line, self._line, self._indent)
        start, end = self.base.lines[node]
        self.lines[node] = (start + moved[2], end + moved[2])
        return True


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
    walk's), and its code, from one printing. With `base`, the layout of a tree the module was made
    from by edits: the nodes the edits left alone are taken from `base` rather than printed."""

    def __init__(self, module: cst.Module, base: "Layout | None" = None) -> None:
        if base is None:
            state = _EveryNode(module)
            module._codegen(state)
        else:
            state = _Splicing(module, base)
            with _reusing():
                module._codegen(state)
        self.module = module
        self.code = "".join(state.tokens)
        self.text = self.code + state.popped  # (what the spans index)
        self.parents = state.parents
        self.children = state.children
        self.order = state.order
        self._spans = state.spans
        self._tokens, self._popped, self._offsets = state.tokens, state.popped, None
        self._of_types: dict[frozenset[type], list[cst.CSTNode]] = {}
        self._base = base
        self._roots = getattr(state, "roots", {})
        self.printed = getattr(state, "printed", state.order)  # (the nodes printed here, not taken from `base`)
        self.lines = _Lines(self, state.lines)
        if base is None:
            self.shared = len(state.order) > len(state.children)  # (a tree that holds one node in two places)
        else:
            self.shared = _holds_twice(state)

    def of_types(self, kinds: frozenset[type]) -> list[cst.CSTNode]:
        """The nodes of these exact types (LibCST's node classes have no subclasses), in a walk's order."""
        found = self._of_types.get(kinds)
        if found is None:
            found = self._of_types[kinds] = [node for node in self.order if type(node) in kinds]
        return found

    def span(self, node: cst.CSTNode) -> Span | None:
        """Where `node`'s text lies in this printing (None: not a node of this tree, or not of a
        kind a made tree takes whole, `REUSABLE`)."""
        if type(node) not in REUSABLE:
            return None
        raw = self._spans.get(node)
        if raw is not None:
            first, last, start, end, line, end_line, indent = raw
            if self._offsets is None:  # (token index -> offset in the text)
                self._offsets = list(accumulate(map(len, [*self._tokens, self._popped]), initial=0))
            return Span(first, last, self._offsets[start], self._offsets[end], line, end_line, indent)
        if self._base is None:
            return None
        root = self._reused_root(node)
        return None if root is None else self._base.span(node).moved(*self._roots[root])

    def extent(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """(first, last): `order[first:last]` is `node` and every node below it, for a statement,
        a block or clause, or a lambda of this tree (None: another node)."""
        if type(node) not in _EXTENDED:
            return None
        raw = self._spans.get(node)
        if raw is not None:
            return raw[0], raw[1]
        root = self._reused_root(node) if self._base is not None else None
        if root is None:
            return None
        first, last = self._base.extent(node)
        moved = self._roots[root][0]
        return first + moved, last + moved

    def _reused_root(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node taken whole from the base layout that holds `node` (None: none does)."""
        roots, parents = self._roots, self.parents
        while node is not None:
            if node in roots:
                return node
            node = parents.get(node)
        return None


class _Lines:
    """`layout.lines[node]`: (first line, last line); a node inside a subtree taken from the base
    layout is looked up there, moved by the lines that subtree moved by."""

    __slots__ = ("layout", "own")

    def __init__(self, layout: Layout, own: dict[cst.CSTNode, tuple[int, int]]) -> None:
        self.layout, self.own = layout, own

    def __getitem__(self, node: cst.CSTNode) -> tuple[int, int]:
        found = self.own.get(node)
        if found is not None:
            return found
        layout = self.layout
        root = layout._reused_root(node) if layout._base is not None else None
        if root is None:
            raise KeyError(node)
        start, end = layout._base.lines[node]
        moved = layout._roots[root][2]
        found = self.own[node] = (start + moved, end + moved)
        return found

    def get(self, node: cst.CSTNode, default=None):
        try:
            return self[node]
        except KeyError:
            return default

    def __contains__(self, node: cst.CSTNode) -> bool:
        return self.get(node) is not None

    def __eq__(self, other) -> bool:
        return dict(self.items()) == dict(other.items() if isinstance(other, _Lines) else other)

    def __iter__(self):
        return iter(self.layout.order)

    def items(self):
        return ((node, self[node]) for node in self.layout.order)


def _holds_twice(state: _Splicing) -> bool:
    """Whether the made tree holds a node in two places: printed twice, taken whole twice, or
    inside a subtree taken whole and also elsewhere."""
    roots, parents = state.roots, state.base.parents
    if state.twice or len(set(state.printed)) < len(state.printed):
        return True
    for node in [*state.printed, *roots]:
        above = parents.get(node)
        while above is not None:
            if above in roots:
                return True
            above = parents.get(above)
    return False


_ORIGINAL_CODEGEN = cst.CSTNode._codegen
_REUSERS = 0
_REUSERS_LOCK = threading.Lock()


def _codegen(self: cst.CSTNode, state: CodegenState, **kwargs) -> None:
    """CSTNode._codegen, which a `_Splicing` state may answer with the text it already has."""
    if not kwargs and type(state) is _Splicing and state.reuse(self):
        return
    state.before_codegen(self)
    self._codegen_impl(state, **kwargs)
    state.after_codegen(self)


@contextmanager
def _reusing() -> Iterator[None]:
    """LibCST's printing, with reused text: a node is printed by its parent calling its
    `_codegen`, and only there can its printing be skipped. Other printings meanwhile (other
    threads) go through `_codegen` as LibCST's own."""
    global _REUSERS
    with _REUSERS_LOCK:
        _REUSERS += 1
        cst.CSTNode._codegen = _codegen
    try:
        yield
    finally:
        with _REUSERS_LOCK:
            _REUSERS -= 1
            if not _REUSERS:
                cst.CSTNode._codegen = _ORIGINAL_CODEGEN


def printed_lines(module: cst.Module, node: cst.CSTNode, wanted: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
    """The lines of `wanted` when `node` (of `module`) is printed from line 1."""
    state = LayoutState(module, set(wanted))
    node._codegen(state)
    return {node: state.lines[node] for node in wanted if node in state.lines}
