"""Parse only what mentions CUDA: functions and classes that do not are set aside before LibCST.

LibCST is the slow part of a migration: a file's parse, name resolution and printing cost
about ten times Python's own `ast.parse`. Most of a real file that mentions CUDA at all does
not mention it in most of its functions. So `ast` (in C) finds the top-level functions and
classes, and the methods of the classes, that contain no CUDA mention and no name the file
binds from a statement that does; each becomes a one-line stand-in that binds the same name
(`def train(): pass  # <marker>`). The rules run on that smaller module; `restore` puts the
original bytes back in place of each stand-in, and `original_lines` maps a finding's lines back.

A stand-in binds what the original bound, so name resolution sees the same module-level names;
every statement that refers to a name bound from CUDA code is kept, so nothing a rule looks at
(uses of an alias, of an event, of an import it may remove) is hidden from it.
"""

from __future__ import annotations

import ast
import bisect
from array import array
import copy
import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import libcst as cst

from torchport.migrate.mentions import Mentions
from torchport.import_table import bound_names
from torchport.pyast import AST_PARSE_ERRORS

MARKER = b"torchport-elided"
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CST_DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef})


@dataclass(frozen=True)
class Elision:
    """A module with its CUDA-free definitions replaced by stand-ins, and how to put them back."""

    reduced: bytes
    stand_ins: tuple[bytes, ...]  # each stand-in line, as written in `reduced` (with its line ending)
    originals: tuple[bytes, ...]  # the bytes each stand-in replaced
    stand_in_lines: tuple[int, ...]  # the line of each stand-in in `reduced`
    hidden_lines: tuple[int, ...]  # how many more lines each original had than its stand-in
    # the first and last line of each original (arrays: no small objects left among the freed
    # ones of the file's `ast` tree, whose memory then goes back whole, for LibCST's parser)
    span_firsts: array = field(default_factory=lambda: array("l"))
    span_lasts: array = field(default_factory=lambda: array("l"))
    # where each original lies among the definitions (`Definition.path`), and what it defines
    set_aside: tuple[tuple[tuple[int, ...], bytes, str], ...] = ()

    @functools.cached_property
    def _hidden_through(self) -> list[int]:
        """[0, hidden lines of the first stand-in, of the first two, ...] (the stand-ins are in order)."""
        return [0, *itertools.accumulate(self.hidden_lines)]

    def seen(self, tree: ast.Module) -> tuple[ast.Module, array]:
        """What `ast.parse(self.reduced)` would give for the parts the rules read, from the
        source's own `tree` (without parsing again): the module with each set-aside definition
        replaced by an empty one of the same name, and the line in `reduced` where each of its
        top-level statements starts."""
        firsts = set(self.span_firsts)

        def body(nodes: list[ast.stmt]) -> list[ast.stmt]:
            kept = []
            for node in nodes:
                if isinstance(node, _DEFINITIONS) and _first_line(node) in firsts:
                    node = ast.copy_location(_stand_in(node), node)
                elif isinstance(node, ast.ClassDef):
                    node = copy.copy(node)
                    node.body = body(node.body)
                kept.append(node)
            return kept

        lines = array("l", (
            self.reduced_line(_first_line(node) if _first_line(node) in firsts else node.lineno) for node in tree.body
        ))
        return ast.Module(body(tree.body), []), lines

    def definitions_in(self, module: cst.Module) -> set[cst.CSTNode] | None:
        """The definitions of `module`, LibCST's tree of the whole source, that the stand-ins
        stand for (None where one is not found there)."""
        found = set()
        for path, keyword, name in self.set_aside:
            body, node = module.body, None
            for index in path:
                definitions = [s for s in body if type(s) in _CST_DEFINITIONS]
                if index >= len(definitions):
                    return None
                node = definitions[index]
                body = node.body.body if type(node.body) is cst.IndentedBlock else ()
            if node is None or node.name.value != name or (type(node) is cst.ClassDef) != (keyword == b"class"):
                return None
            found.add(node)
        return found

    def reduced_line(self, line: int) -> int:
        """Line `line` of the source (outside any set-aside definition, or the first of one) in `reduced`."""
        return line - self._hidden_through[bisect.bisect_left(self.span_lasts, line)]

    def reduced_end_line(self, line: int) -> int:
        """Line `line` of the source (outside any set-aside definition, or the last of one) in `reduced`."""
        return line - self._hidden_through[bisect.bisect_right(self.span_lasts, line)]

    def restore(self, migrated: bytes) -> bytes | None:
        """`migrated` (the rules' output for `reduced`) with the original bytes back; None if a
        stand-in was moved or changed, so that the caller migrates the whole file instead."""
        pieces = []
        position = 0
        for stand_in, original in zip(self.stand_ins, self.originals):
            start = migrated.find(stand_in, position)
            if start < 0 or migrated.find(stand_in, start + 1) >= 0:
                return None
            pieces += [migrated[position:start], original]
            position = start + len(stand_in)
        pieces.append(migrated[position:])
        return b"".join(pieces)

    def original_lines(self, first: int, last: int) -> tuple[int, int]:
        """Lines `first`..`last` of `reduced` as lines of the original source."""
        if not first:  # a row about the file as a whole
            return first, last

        def hidden_before(line: int, inclusive: bool) -> int:
            find = bisect.bisect_right if inclusive else bisect.bisect_left
            return self._hidden_through[find(self.stand_in_lines, line)]

        # A row that ends on a stand-in's line spans the whole stand-in (a one-line row there
        # is about the file: rows never point into code that was set aside).
        return first + hidden_before(first, False), last + hidden_before(last, last > first)


def elide(source: bytes, mentions: Mentions | re.Pattern[bytes], tree: ast.Module | None = None) -> Elision | None:
    """The source with every definition that `mentions` does not match set aside, or None
    when there is nothing worth setting aside (or the file is not one `ast` can read).
    `tree`: the source's `ast`, when the caller has it already."""
    if MARKER in source:
        return None
    if tree is None:
        try:
            tree = ast.parse(source)
        except AST_PARSE_ERRORS:
            return None
    lines = source.splitlines(keepends=True)
    return elide_definitions(source, lines, definitions(tree, lines), names_near_cuda(tree, lines, mentions), mentions)


class Definition(NamedTuple):
    """A definition that may be set aside: where it lies, and what its stand-in says."""

    first: int  # its first line (decorators included)
    last: int
    indent: bytes
    keyword: bytes  # b"def" or b"class"
    name: str
    inner: tuple[Definition, ...] = ()  # a class's own definitions (set aside when it is kept)
    # its place: the how-manyth definition of the module it is (of the class, then, for a method)
    path: tuple[int, ...] = ()


def definitions(tree: ast.Module, lines: list[bytes]) -> list[Definition]:
    """The definitions of `tree` (whose lines are those of `lines`, a whole file's) that a
    stand-in can replace, with the methods of their classes: read without the file's mentions,
    so that a file read in parts needs each part's tree once."""
    return list(_definitions(tree.body, lines, outer_first_line=0, path=()))


def elide_definitions(source: bytes, lines: list[bytes], found: list[Definition], names: set[str], mentions) -> Elision | None:
    """`source` (split into `lines`) with those of its definitions `found` that neither `mentions`
    nor any of `names` (bound near CUDA: `names_near_cuda`) matches set aside."""
    if MARKER in source:
        return None
    names_re = Mentions([rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b"]) if names else None

    def mentions_cuda(first: int, last: int) -> bool:
        chunk = b"".join(lines[first - 1 : last])
        return bool(mentions.search(chunk) or (names_re is not None and names_re.search(chunk)))

    spans = list(_elidable(found, mentions_cuda))
    if not spans:
        return None
    pieces, stand_ins, originals, stand_in_lines, hidden_lines = [], [], [], [], []
    line = 1  # the next line of the source to copy
    reduced_line = 1
    for index, (first, last, indent, keyword, name, *_) in enumerate(spans):
        pieces.append(b"".join(lines[line - 1 : first - 1]))
        reduced_line += first - line
        original = b"".join(lines[first - 1 : last])
        header = indent + keyword + b" " + name.encode() + (b"(): " if keyword == b"def" else b": ")
        stand_in = header + b"pass  # " + MARKER + b" " + str(index).encode() + _line_ending(lines[last - 1])
        pieces.append(stand_in)
        stand_ins.append(stand_in)
        originals.append(original)
        stand_in_lines.append(reduced_line)
        hidden_lines.append(last - first)
        reduced_line += 1
        line = last + 1
    pieces.append(b"".join(lines[line - 1 :]))
    return Elision(
        b"".join(pieces), tuple(stand_ins), tuple(originals), tuple(stand_in_lines), tuple(hidden_lines),
        array("l", (span.first for span in spans)), array("l", (span.last for span in spans)),
        tuple((span.path, span.keyword, span.name) for span in spans),
    )


def top_level_lines(body: list[ast.stmt], elision: Elision | None):
    """(statement, its line as `ast` gives it, its first line (decorators included), its last)
    for each top-level statement of a source's tree, in the lines of what LibCST sees: the
    reduced source, where definitions were set aside (a stand-in is one line)."""
    if elision is None:
        for node in body:
            yield node, node.lineno, _first_line(node), node.end_lineno or node.lineno
        return
    firsts = set(elision.span_firsts)
    for node in body:
        first = _first_line(node)
        if first in firsts:
            line = elision.reduced_line(first)
            yield node, line, line, line
        else:
            last = node.end_lineno or node.lineno
            yield node, elision.reduced_line(node.lineno), elision.reduced_line(first), elision.reduced_end_line(last)


def _line_ending(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return b"\r\n"
    if line.endswith((b"\n", b"\r")):
        return line[-1:]
    return b""


def _stand_in(node: ast.stmt) -> ast.stmt:
    """`def name(): pass` or `class name: pass`, as `ast` reads a stand-in."""
    if isinstance(node, ast.ClassDef):
        return ast.ClassDef(name=node.name, bases=[], keywords=[], body=[ast.Pass()], decorator_list=[])
    arguments = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=node.name, args=arguments, body=[ast.Pass()], decorator_list=[], returns=None)


def _first_line(node: ast.stmt) -> int:
    """The first line of a statement, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def _definitions(body, lines: list[bytes], outer_first_line: int, path: tuple[int, ...]):
    """Each definition of `body` that could be set aside (a class with its own)."""
    for index, node in enumerate(node for node in body if isinstance(node, _DEFINITIONS)):
        first = _first_line(node)
        last = node.end_lineno
        if first <= outer_first_line or last is None:
            continue  # shares a line with the statement around it (`class A: def f(): ...` cannot, but be sure)
        indent = lines[first - 1][: node.col_offset]
        if indent.strip() or (node.decorator_list and not lines[first - 1].lstrip().startswith(b"@")):
            continue
        is_class = isinstance(node, ast.ClassDef)
        inner = tuple(_definitions(node.body, lines, node.lineno, (*path, index))) if is_class else ()
        yield Definition(first, last, indent, b"class" if is_class else b"def", node.name, inner, (*path, index))


def _elidable(found: list[Definition], mentions_cuda):
    """The definitions to set aside: those that do not mention CUDA (in a class that does, its own)."""
    for definition in found:
        if mentions_cuda(definition.first, definition.last):
            yield from _elidable(definition.inner, mentions_cuda)
        else:
            yield definition


def names_near_cuda(tree: ast.Module, lines: list[bytes], mentions) -> set[str]:
    """Names that statements mentioning CUDA bind at module level (or in a class body):
    `from torch.cuda import amp`, `start = torch.cuda.Event()`, `DEVICE = "cuda"`."""
    names: set[str] = set()

    def visit(body) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            last = node.end_lineno or node.lineno
            if not mentions.search(b"".join(lines[node.lineno - 1 : last])):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.alias):
                    names.add((inner.asname or inner.name).split(".")[0])
                else:
                    names.update(bound_names(inner))

    visit(tree.body)
    return names
