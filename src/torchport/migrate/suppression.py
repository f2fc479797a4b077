"""Suppression comments, spelled as flake8 and ruff spell theirs:

    x = y.cuda()  # noqa                      every code, on this line
    x = y.cuda()  # noqa: TP003,TP005         these codes (or code prefixes), comma- or space-separated
    x = y.cuda()  # torchport: ignore[TP003]  the same, in torchport's own words (no brackets: every code)
    # torchport: skip-file                    on a line of its own: the whole file is copied unchanged

A comment suppresses the findings that start on its line. A statement that spans several lines
(`x = f(\\n  y.cuda(),\\n)`) is also suppressed whole by a comment on its first or its last line
(ruff's place for a multi-line string's noqa); for `with`, `if`, `def` that is their header, not
the block. A suppressed finding neither changes its line nor writes a row: it is counted instead.

What suppression applies to: the rules of the one pass over a parsed file (TP0xx, TP1xx), and
the rows of the rules that read its `ast` apart (TP026, TP027).
TP024 (`async=`) rewrites tokens before the parse and is not suppressed: the file would not be
valid Python without it. The apex conversion and `--distributed` rewrite whole files: turn them
off with `--ignore` or `# torchport: skip-file`. TP000 follows what the rules changed.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from torchport.findings import Finding

# Cheap tests on the bytes, before anything is tokenized (most files say neither).
MENTIONS = re.compile(rb"noqa|torchport\s*:\s*ignore", re.IGNORECASE)
SKIP_FILE = re.compile(rb"^[ \t]*#[ \t]*torchport:[ \t]*skip[-_]file[ \t]*$", re.IGNORECASE | re.MULTILINE)
SKIP_REASON = "skipped on request (# torchport: skip-file)"

_CODE = r"[A-Z]+[0-9]+"
_NOQA = re.compile(rf"#\s*noqa\b(?::\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*torchport:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


def skips_file(data: bytes) -> bool:
    return SKIP_FILE.search(data) is not None


@dataclass
class Suppressions:
    """The suppression comments of one text: line -> codes (None: every code)."""

    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    statements: dict[int, tuple[int, int]] = field(default_factory=dict)  # line -> (first, last) of a multi-line statement

    def covers(self, code: str, line: int) -> bool:
        """Whether a finding of `code` that starts on `line` is suppressed."""
        if not line:  # (a row about the file as a whole)
            return False
        first, last = self.statements.get(line, (line, line))
        return any(self._says(where, code) for where in {line, first, last})

    def _says(self, line: int, code: str) -> bool:
        if line not in self.lines:
            return False
        codes = self.lines[line]
        return codes is None or any(code.startswith(c) for c in codes)


def codes_of(comment: str) -> frozenset[str] | None | bool:
    """What one comment suppresses: a set of codes, None (every code), or False (nothing)."""
    found = _NOQA.search(comment) or _IGNORE.search(comment)
    if found is None:
        return False
    said = found.group("codes")
    codes = frozenset(word.upper() for word in re.split(r"[\s,]+", said or "") if word)
    return codes or None


def of_text(text: str) -> Suppressions | None:
    """The suppressions of `text` (Python source); None where it has none."""
    if not MENTIONS.search(text.encode("utf-8", "replace")):
        return None
    found = Suppressions()
    start = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, line = token.type, token.start[0]
            if kind == tokenize.COMMENT:
                codes = codes_of(token.string)
                if codes is not False:
                    found.lines[line] = codes
            elif kind == tokenize.NEWLINE and start is not None:
                end = token.start[0]
                if end > start:
                    found.statements.update((number, (start, end)) for number in range(start, end + 1))
                start = None
            elif kind not in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER) and start is None:
                start = line
    except (tokenize.TokenError, SyntaxError):  # (what was read so far holds)
        pass
    return found if found.lines else None


def drop_suppressed(context, suppressions: Suppressions | None) -> list[Finding]:
    """Take out of `context` (a rules pass's FileContext) the rows and fixes that `suppressions`
    cover; return the rows taken out."""
    if suppressions is None or not context.reported:
        return []
    lines = context.lines_of({row[0] for row in context.reported} | set(context.fixes))
    start = lambda node: lines.get(node, (0, 0))[0]  # noqa: E731
    kept, dropped = [], []
    for row in context.reported:
        node, code = row[0], row[1]
        (dropped if suppressions.covers(code, start(node)) else kept).append(row)
    if not dropped:
        return []
    context.reported[:] = kept
    for node in list(context.fixes):
        pairs = [(fix, origin) for fix, origin in zip(context.fixes[node], context.fix_origins.get(node, []))
                 if not suppressions.covers(origin[0], start(node))]
        if pairs:
            context.fixes[node], context.fix_origins[node] = [p[0] for p in pairs], [p[1] for p in pairs]
        else:
            del context.fixes[node]
            context.fix_origins.pop(node, None)
    context.needs_again()  # (a suppressed change's imports and definitions are not needed)
    path = context.path
    return [Finding(path, *lines.get(node, (0, 0)), code, operation, message, *extra)
            for node, code, operation, message, *extra in dropped]
