"""Where each line of a rewritten text came from in the text before it."""

from __future__ import annotations

import difflib


ALIGN_BUDGET = 40_000  # line pairs compared in one replaced block at most (beyond: paired by position)
SIMILAR = 0.6  # how alike two lines must be (difflib's ratio) for a new one to stand for an old one


def line_map(before: str, after: str, align_replaced: bool = False) -> list[int]:
    """For each line of `after` (index 0 is line 1), the line of `before` it stands for: its own
    line where kept or modified, the next kept line for an inserted one (a block put above a
    statement belongs to it), the last line where nothing follows. `align_replaced`: in a run of
    lines replaced by a run of another length (lines rewritten and a block inserted among them),
    a new line stands for the old line it resembles most, as difflib's Differ pairs them, rather
    than for the old line at its position."""
    old, new = before.splitlines(), after.splitlines()
    mapped = [0] * len(new)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if align_replaced and tag == "replace" and i2 - i1 != j2 - j1 and (i2 - i1) * (j2 - j1) <= ALIGN_BUDGET:
            _align(old, new, (i1, i2), (j1, j2), mapped, min(i2 + 1, max(len(old), 1)))
            continue
        for j in range(j1, j2):
            if tag == "equal" or (tag == "replace" and i1 + (j - j1) < i2):
                mapped[j] = i1 + (j - j1) + 1
            else:
                mapped[j] = min(i2 + 1, max(len(old), 1))
    return mapped


def _align(old: list[str], new: list[str], olds: tuple[int, int], news: tuple[int, int], mapped: list[int],
           following: int) -> None:
    """Map new[news] (which replaced old[olds]): the most alike pair of lines first, then the runs
    on either side of it; a new line alike to none stands for the line that follows it."""
    (i1, i2), (j1, j2) = olds, news
    best, pair = SIMILAR, None
    matcher = difflib.SequenceMatcher(autojunk=False)
    for j in range(j1, j2):
        matcher.set_seq2(new[j])
        for i in range(i1, i2):
            matcher.set_seq1(old[i])
            if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best and matcher.ratio() > best:
                best, pair = matcher.ratio(), (i, j)
    if pair is None:
        mapped[j1:j2] = [following] * (j2 - j1)
        return
    i, j = pair
    mapped[j] = i + 1
    _align(old, new, (i1, i), (j1, j), mapped, i + 1)
    _align(old, new, (i + 1, i2), (j + 1, j2), mapped, following)


def back(lines: list[int], line: int) -> int:
    """`line` of the rewritten text, as a line of the text before it."""
    return lines[line - 1] if 0 < line <= len(lines) else line
