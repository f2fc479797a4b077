"""A large module is read and migrated in pieces: runs of whole top-level statements, each parsed
alone and dropped before the next.

LibCST's tree of a module costs about 700 times its bytes (a bare parse of a 200k-line file whose
every line calls `.cuda()` needs 5 GB), and `ast`'s about 200 times. So a file over
READ_WHOLE_BYTES is read with `ast` a piece at a time (`AstPieces`), and a LibCST input over
MIGRATE_WHOLE_BYTES is migrated a piece at a time (`plan`, then source.py). What a rule needs of
the rest of the file is read before the first piece: the import table, the names that hold a
device or an index, the file's top-level imports, and, as the pieces go, what an earlier piece
already reported once for the file (FileContext.first_time). A module-level name that a rule
follows to its uses (`Rule.follows`: a CUDA event) keeps its statement and every later one that
mentions it in one piece.

What reads or changes the top level as a whole (tidying the imports, merging adjacent guards)
runs on a `Skeleton`: the migrated top level with each run of statements it never reads as one
stand-in line, put back afterwards. Line numbers in reports are those of the whole file.
"""

from __future__ import annotations

import ast
import bisect
import io
import itertools
import re
import tokenize
import warnings
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from torchport.migrate.rules.base.nodes import source_of

READ_WHOLE_BYTES = 1 << 20  # a file up to this size is read with one `ast` parse
READ_PIECE_BYTES = 512 << 10  # else in pieces of about this size
MIGRATE_WHOLE_BYTES = 512 << 10  # LibCST sees an input up to this size whole
MIGRATE_PIECE_BYTES = 192 << 10  # and a larger one in pieces of about this size
MARKER = "torchport-piece"
_NEWLINE = re.compile(r"\r\n?|\n")
# A line that cannot start a top-level statement (it continues one, or says nothing).
_NOT_A_START = re.compile(rb"[ \t\f\r\n#)\]}]|(?:else|elif|except|finally)\b")
_COMPOUND = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
    ast.With, ast.AsyncWith, ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()), ast.Match,
)


# --- reading with `ast` -------------------------------------------------------------------


class AstPieces:
    """The `ast` trees of a large file's pieces, in order; parsed anew each time `trees()` is
    walked (holding them all would cost what one tree of the whole file costs). Every piece is
    whole top-level statements: a cut is taken only where the part before it parses alone, which
    it does not inside a string, a bracket, a block, a decorated definition or a continued line."""

    def __init__(self, lines: list[bytes], encoding: str, size: int = READ_PIECE_BYTES) -> None:
        self.lines = lines
        self.encoding = encoding
        self.size = size
        self.ranges: list[tuple[int, int]] | None = None  # (first line, last line) of each, once found

    def trees(self) -> Iterator[ast.Module]:
        """Raises what `ast.parse` raises where the file is not valid Python."""
        if self.ranges is not None:
            for first, last in self.ranges:
                yield self._parse(first, last)
            return
        ranges = []
        for first, last, tree in self._find():
            ranges.append((first, last))
            yield tree
        self.ranges = ranges

    def _find(self) -> Iterator[tuple[int, int, ast.Module]]:
        lines = self.lines
        offsets = array("q", itertools.accumulate((len(line) for line in lines), initial=0))
        starts = array("l", (n for n, line in enumerate(lines, start=1) if n > 1 and not _NOT_A_START.match(line)))
        first = 1
        while first <= len(lines):
            want = self.size
            while True:
                cut = _cut_after(starts, offsets, first, want, len(lines))
                try:
                    tree = self._parse(first, cut - 1)
                    break
                except SyntaxError:
                    if cut > len(lines):
                        raise
                    want *= 2  # (a cut inside a long string: look further, not line by line)
            yield first, cut - 1, tree
            first = cut

    def _parse(self, first: int, last: int) -> ast.Module:
        """Lines `first`..`last`, parsed with their own line numbers (blank lines in front)."""
        text = "\n" * (first - 1) + b"".join(self.lines[first - 1 : last]).decode(self.encoding)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)


def _cut_after(starts: array, offsets: array, first: int, size: int, count: int) -> int:
    """The first line that may start a statement at least `size` bytes after line `first` (past
    the end: count + 1)."""
    line = bisect.bisect_left(offsets, offsets[first - 1] + size) + 1  # (offsets[i]: where line i + 1 starts)
    at = bisect.bisect_left(starts, max(line, first + 1))
    return starts[at] if at < len(starts) else count + 1


def encoding_of(source: bytes) -> str:
    """The file's encoding as Python (and LibCST) read it: a coding cookie, a BOM, else UTF-8."""
    return tokenize.detect_encoding(io.BytesIO(source).readline)[0]


# --- the top level of what LibCST sees -----------------------------------------------------


@dataclass
class TopLevel:
    """The top-level statements of a LibCST input (the file, or its reduced form: elide.py)."""

    starts: array = field(default_factory=lambda: array("l"))  # the line `ast` gives each (lines.py)
    firsts: array = field(default_factory=lambda: array("l"))  # its first line, decorators included
    lasts: array = field(default_factory=lambda: array("l"))
    compound: array = field(default_factory=lambda: array("b"))
    imports: list[int] = field(default_factory=list)  # the statements that import
    followed: list[tuple[int, frozenset[str]]] = field(default_factory=list)  # (statement, names a rule follows)

    def add(self, node: ast.stmt, start: int, first: int, last: int, follows: re.Pattern[bytes] | None, text: bytes) -> None:
        """One more statement, at lines `start`, `first`, `last` of the input; `text`: what it
        says, when `follows` may match it (the names it binds are then followed)."""
        index = len(self.starts)
        self.starts.append(start)
        self.firsts.append(first)
        self.lasts.append(last)
        self.compound.append(isinstance(node, _COMPOUND))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports.append(index)
        if follows is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if follows.search(text):
                names = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                if names:
                    self.followed.append((index, names))

    def joined(self, source: bytes) -> bytearray:
        """For each statement, whether it must share a piece with the one before it: the uses
        of a followed name, up to the last statement that mentions it."""
        joined = bytearray(len(self.starts))
        line_starts = None
        for index, names in self.followed:
            pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
            if line_starts is None:
                line_starts = array("q", (m.end() for m in re.finditer(rb"\r\n?|\n", source)))
            last_use = None
            for last_use in pattern.finditer(source):
                pass
            if last_use is None:
                continue
            line = bisect.bisect_right(line_starts, last_use.start()) + 1
            through = bisect.bisect_right(self.firsts, line) - 1
            for later in range(index + 1, through + 1):
                joined[later] = 1
        for at in range(1, len(self.starts)):  # (`a; b` is one line for LibCST)
            if self.firsts[at] <= self.lasts[at - 1]:
                joined[at] = 1
        return joined


@dataclass(frozen=True)
class Piece:
    """Lines `first`..`last` of the input: its statements `statements`, and the blank and comment
    lines above them. A piece after the first is parsed behind two statements of its own (see
    `text_of`), where nothing is reported or changed: an `if 0:` block indented as the whole input
    is, so that LibCST takes the same indentation for the code the rules write; then the
    statement before the piece when it is a simple one (`behind`: a rule may compare a statement
    with the one before it), else a `pass`. So the lines above the piece's first statement are
    that statement's leading lines, as in the whole module, not a module header, nor a block's."""

    first: int
    last: int
    statements: range
    behind: int | None = None

    @property
    def parsed_behind(self) -> int:
        """How many statements the piece is parsed behind."""
        return 0 if self.statements.start == 0 else 2

    def text_of(self, lines: list[str], top: TopLevel, newline: str, indent: str) -> tuple[str, int, array]:
        """The text to parse, how many lines of the input come before its first line (that many
        lines down, its rows are rows of the input), and the `ast` line of each statement in it."""
        if self.statements.start == 0:
            return "".join(lines[self.first - 1 : self.last]), 0, array("l", (top.starts[i] for i in self.statements))
        first, indices = (top.firsts[self.behind], range(self.behind, self.statements.stop)) if self.behind is not None \
            else (self.first, self.statements)
        block = f"if 0:{newline}{indent}pass{newline}"  # (its own lines: the indented ones after it are its own)
        if self.behind is None:
            block += f"pass{newline}"
        before = block.count(newline)
        offset = first - 1 - before
        starts = array("l", [1] if self.behind is not None else [1, 3])
        starts.extend(top.starts[i] - offset for i in indices)
        return block + "".join(lines[first - 1 : self.last]), offset, starts


def plan(top: TopLevel, source: bytes, line_count: int, size: int = MIGRATE_PIECE_BYTES) -> list[Piece]:
    """Pieces of about `size` bytes that cover the input's `line_count` lines, each cut right
    after a statement (what follows it, to the next statement, goes with the next piece)."""
    count = len(top.starts)
    if count == 0:
        return [Piece(1, line_count, range(0))]
    joined = top.joined(source)
    line_starts = array("q", [0, *(m.end() for m in re.finditer(rb"\r\n?|\n", source))])
    pieces, begin, begin_line = [], 0, 1
    for at in range(1, count):
        cut_line = top.lasts[at - 1] + 1
        if not joined[at] and line_starts[cut_line - 1] - line_starts[begin_line - 1] >= size:
            pieces.append(_piece(top, joined, begin_line, cut_line - 1, begin, at))
            begin, begin_line = at, cut_line
    pieces.append(_piece(top, joined, begin_line, line_count, begin, count))
    return pieces


def _piece(top: TopLevel, joined: bytearray, first: int, last: int, begin: int, end: int) -> Piece:
    behind = None
    if begin > 0 and not top.compound[begin - 1]:
        behind = begin - 1
        while behind > 0 and top.firsts[behind] <= top.lasts[behind - 1]:  # (`a; b`: one line, taken whole)
            behind -= 1
    return Piece(first, last, range(begin, end), behind)


def default_indent(lines: list[str], top: TopLevel) -> str:
    """The indentation LibCST would take for the whole input: that of its first indented block."""
    for index, compound in enumerate(top.compound):
        if not compound:
            continue
        text = "".join(lines[top.firsts[index] - 1 : top.lasts[index]])
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.INDENT:
                    return token.string
        except (tokenize.TokenError, SyntaxError):
            continue
    return " " * 4


def default_newline(text: str) -> str:
    """The newline LibCST would take: the file's first."""
    found = _NEWLINE.search(text)
    return found.group(0) if found else "\n"


def split_lines(text: str) -> list[str]:
    """`text`'s lines with their endings, split where Python splits them (not at form feeds)."""
    ends = [m.end() for m in _NEWLINE.finditer(text)]
    lines = [text[a:b] for a, b in zip([0, *ends], ends)]
    if not ends or ends[-1] < len(text):
        lines.append(text[ends[-1] if ends else 0 :])
    return lines


# --- the skeleton ---------------------------------------------------------------------------


class Skeleton:
    """The migrated top level, as text, with each run of statements that the import tidying and
    the guard merging never read (neither an import, nor the file's first line, nor one of the
    target's definitions, nor a guard) as one stand-in line, of the same kind (a simple statement
    or a compound one). The comments and blank lines above a run stay in the text, so that the
    skeleton's statements carry the same leading lines as the whole module's."""

    def __init__(self, newline: str, definitions: dict[str, str], guard: str | None) -> None:
        self.newline = newline
        self.definitions = definitions
        self.guard = guard
        self.parts: list[str] = []
        self.runs: list[tuple[str, bool]] = []  # what each stand-in stands for, and whether it is simple
        self.first = True

    def add(self, module: cst.Module, behind: int) -> str:
        """Add a migrated piece (its first `behind` statements are what it was parsed behind, not
        its own); its code."""
        code: list[str] = [*map(module.code_for_node, module.header)]
        self.parts += code
        run: list[tuple[cst.BaseStatement, str]] = []
        for statement in module.body[behind:]:
            text = module.code_for_node(statement)
            code.append(text)
            if self._read_as_it_is(statement):
                self._flush(module, run)
                run = []
                self.parts.append(text)
            else:
                if run and isinstance(run[-1][0], cst.SimpleStatementLine) != isinstance(statement, cst.SimpleStatementLine):
                    self._flush(module, run)
                    run = []
                run.append((statement, text))
            self.first = False
        self._flush(module, run)
        footer = "".join(map(module.code_for_node, module.footer))
        self.parts.append(footer)
        code.append(footer)
        return "".join(code)

    def _read_as_it_is(self, statement: cst.BaseStatement) -> bool:
        if isinstance(statement, cst.SimpleStatementLine):
            if self.first or any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
                return True
            small = statement.body[0] if len(statement.body) == 1 else None
            return (
                isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value in self.definitions
            )
        if isinstance(statement, cst.FunctionDef):
            return statement.name.value in self.definitions
        return isinstance(statement, cst.If) and self.guard is not None and source_of(statement.test) == self.guard

    def _flush(self, module: cst.Module, run: list[tuple[cst.BaseStatement, str]]) -> None:
        if not run:
            return
        leading = "".join(map(module.code_for_node, run[0][0].leading_lines))
        whole = "".join(text for _, text in run)
        assert whole.startswith(leading)
        simple = isinstance(run[0][0], cst.SimpleStatementLine)
        self.parts.append(leading + self.stand_in(len(self.runs), simple))
        self.runs.append((whole[len(leading) :], simple))

    def stand_in(self, index: int, simple: bool) -> str:
        return f"{'pass' if simple else 'if 0: pass'}  # {MARKER} {index}{self.newline}"

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def parts_to_compile(self, code: str) -> list[str]:
        """What compiling the restored `code` checks, in parts that each cost little memory: the
        skeleton's code (its stand-ins are valid Python), and each run of statements, behind a
        `pass` (a `from __future__` import is then as out of place as it would be there)."""
        return [code, *(f"pass{self.newline}{run}" for run, _ in self.runs)]

    def restore(self, code: str) -> str | None:
        """`code` (the skeleton's, tidied) with each stand-in's statements back; None if one was
        lost or moved."""
        parts, position = [], 0
        for index, (original, simple) in enumerate(self.runs):
            line = self.stand_in(index, simple)
            start = code.find(line, position)
            if start < 0:
                return None
            parts += [code[position:start], original]
            position = start + len(line)
        parts.append(code[position:])
        return "".join(parts)
