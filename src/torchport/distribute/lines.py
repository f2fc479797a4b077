"""Where each line of a rewritten text came from in the text before it."""

from __future__ import annotations

import difflib


def line_map(before: str, after: str) -> list[int]:
    """For each line of `after` (index 0 is line 1), the line of `before` it stands for: its own
    line where kept or modified, the next kept line for an inserted one (a block put above a
    statement belongs to it), the last line where nothing follows."""
    old, new = before.splitlines(), after.splitlines()
    mapped = [0] * len(new)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal" or (tag == "replace" and i1 + (j - j1) < i2):
                mapped[j] = i1 + (j - j1) + 1
            else:
                mapped[j] = min(i2 + 1, max(len(old), 1))
    return mapped


def back(lines: list[int], line: int) -> int:
    """`line` of the rewritten text, as a line of the text before it."""
    return lines[line - 1] if 0 < line <= len(lines) else line
