"""Whether a text mentions what some rule reacts to, without running one big regex over it.

Each rule declares what a file must contain for it to act (`Rule.mentions`, a bytes regex). One
alternation of all of them costs about a millisecond per file: Python's `re` tries every branch
at every position. But nearly every branch needs some literal text to match at all (`\\bcudnn\\b`
needs `cudnn`, `get_(?:node_)?rank\\(` needs `rank(`). So each branch is tried only where one of
its literals is present (a substring test, in C), and the answer is the same as the whole regex's.
A branch with no such literal makes the whole pattern run as one regex, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

try:  # (CPython's own regex parser: private, so its absence or a change only costs speed)
    from re import _parser as _sre
except ImportError:  # pragma: no cover
    _sre = None

MIN_LITERAL = 3  # shorter literals are in nearly every file: no use as a filter
SHORT = 1024  # bytes: in a text this short (one definition) the one regex is done before the branches start
_GLOBAL_FLAGS = re.compile(rb"\(\?[aiLmsux]+\)")


class Mentions:
    """A regex (bytes) asked only whether it matches somewhere."""

    def __init__(self, patterns: Iterable[bytes], branches: list | None = None) -> None:
        self.pattern = b"|".join(sorted(set(patterns)))
        self.regex = re.compile(self.pattern)
        # [(literals, regex)], or None: the whole regex
        self.branches = _branches(self.pattern) if branches is None else branches

    def search(self, text: bytes) -> bool:
        if self.branches is None or len(text) < SHORT:
            return self.regex.search(text) is not None
        for literals, regex in self.branches:
            if any(literal in text for literal in literals) and regex.search(text):
                return True
        return False

    def extended(self, pattern: bytes) -> Mentions:
        """These mentions and `pattern`'s (this one's branches are not read again)."""
        added = _branches(pattern)
        if self.branches is None or added is None:
            return Mentions([self.pattern, pattern])
        return Mentions([self.pattern, pattern], branches=self.branches + added)


def _branches(pattern: bytes) -> list[tuple[tuple[bytes, ...], re.Pattern[bytes]]] | None:
    if _sre is None or _GLOBAL_FLAGS.search(pattern):
        return None
    found = []
    for branch in dict.fromkeys(_top_level_branches(pattern)):
        try:
            literals = _required(_sre.parse(branch))
        except Exception:  # noqa: BLE001 (case-insensitive, or a parser that changed: the whole regex)
            return None
        if literals is None:
            return None
        found.append((tuple(sorted(literals)), re.compile(branch)))
    return found


def _top_level_branches(pattern: bytes) -> list[bytes]:
    """`pattern` split at each `|` outside brackets and character classes."""
    branches, start, depth, in_class, i = [], 0, 0, False, 0
    while i < len(pattern):
        char = pattern[i : i + 1]
        if char == b"\\":
            i += 2
            continue
        if in_class:
            in_class = char != b"]"
        elif char == b"[":
            in_class = True
            if pattern[i + 1 : i + 2] == b"]":  # (`[]...]`: a leading `]` is a member)
                i += 1
        elif char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
        elif char == b"|" and depth == 0:
            branches.append(pattern[start:i])
            start = i + 1
        i += 1
    branches.append(pattern[start:])
    return branches


def _required(parsed) -> set[bytes] | None:
    """Literals of which every match of `parsed` contains at least one (None: none known)."""
    items = list(parsed)
    if len(items) == 1 and items[0][0] is _sre.BRANCH:
        return _any_of(items[0][1][1])
    best: set[bytes] | None = None
    run: list[int] = []

    def consider(candidate: set[bytes] | None) -> None:
        nonlocal best
        if candidate and (best is None or min(map(len, candidate)) > min(map(len, best))):
            best = candidate

    for op, value in items:
        if op is _sre.LITERAL:
            run.append(value)
            continue
        if op is _sre.AT:  # (zero-width: `\b` does not break a run of literals)
            continue
        consider({bytes(run)} if run else None)
        run = []
        if op is _sre.SUBPATTERN:
            if value[1] & re.IGNORECASE:
                raise ValueError("a case-insensitive group: its literals say nothing")
            consider(_required(value[-1]))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and value[0] >= 1:
            consider(_required(value[2]))
        elif op is _sre.BRANCH:
            consider(_any_of(value[1]))
    consider({bytes(run)} if run else None)
    if best is None or min(map(len, best)) < MIN_LITERAL:
        return None
    return best


def _any_of(alternatives) -> set[bytes] | None:
    found: set[bytes] = set()
    for alternative in alternatives:
        literals = _required(alternative)
        if literals is None:
            return None
        found |= literals
    return found
