"""OUT/torchport_report/index.html: the run's findings as a page to look at.

An overview (counts per rule and per operation, the files by number of changes, every unsupported
API with its line), then per file a side-by-side diff whose changed lines carry their rule's code
and message, with the unsupported lines marked. One self-contained file (inline CSS and script, a
policy that forbids loading anything), written with jinja2 and autoescaping: paths, source text and
messages are the user's, and are never markup.

The diffs are made while the run goes (`add`, as each file's result comes back), and only their
rows are kept, so the page costs neither a second reading of the tree nor the texts' memory. A large
tree is cut to what a browser shows with ease: at most MAX_FILES files and MAX_ROWS rows of diff on
the page (MAX_FILE_ROWS for one file); the overview still counts everything, and the files left out
are named, with their counts (the CSVs beside the page list every row).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from torchport.findings import Finding, Operation

HTML_REPORT = "index.html"
CONTEXT = 3  # unchanged lines shown around a change or a finding, as `--diff` shows
MAX_FILES = 200
MAX_ROWS = 20_000
MAX_FILE_ROWS = 2_000
MAX_LISTED = 1_000  # rows of the overview's tables


@dataclass
class Row:
    """One line of a side-by-side diff, or a gap of unchanged lines (`kind` "gap", `skipped` lines)."""

    kind: str  # "same", "changed" or "gap"
    old_number: int | None = None
    old: str = ""
    new_number: int | None = None
    new: str = ""
    findings: list[Finding] = field(default_factory=list)
    skipped: int = 0
    at: float = 0.0  # where it stands in the file as read: its line, or between two lines for one inserted

    @property
    def unsupported(self) -> bool:
        return any(f.operation is Operation.UNSUPPORTED for f in self.findings)


@dataclass
class FileDiff:
    name: str
    anchor: str
    changes: int
    unsupported: int
    rows: list[Row]
    cut: bool = False  # the diff goes on past the rows shown (MAX_FILE_ROWS, MAX_ROWS)


class HtmlReport:
    """The page of one run: `add` each file with findings as its result comes, `write` at the end."""

    def __init__(self, max_files: int = MAX_FILES, max_rows: int = MAX_ROWS, max_file_rows: int = MAX_FILE_ROWS) -> None:
        self.max_files = max_files
        self.max_rows = max_rows
        self.max_file_rows = max_file_rows
        self.files: list[FileDiff] = []
        self.rows = 0
        self.left_out: list[str] = []  # files with findings beyond the caps

    def add(self, name: str, old: str, new: str, findings: list[Finding]) -> None:
        """File `name`, as read (`old`) and as migrated (`new`), with its findings."""
        if not findings and old == new:
            return
        if len(self.files) >= self.max_files or self.rows >= self.max_rows:
            self.left_out.append(name)
            return
        rows, cut = side_by_side(old.splitlines(), new.splitlines(), findings, limit=min(self.max_file_rows, self.max_rows - self.rows))
        self.rows += len(rows)
        self.files.append(FileDiff(
            name, f"file-{len(self.files) + 1}", sum(f.operation.is_change for f in findings),
            sum(f.operation is Operation.UNSUPPORTED for f in findings), rows, cut,
        ))

    def write(
        self, directory: Path, findings: list[Finding], summary: Mapping, titles: Mapping[str, str], analysis: bool = False,
    ) -> Path:
        """index.html in `directory`: `findings` are all of the run's (the overview counts them
        all), `titles` name the rules, `analysis`: nothing was rewritten (analyze)."""
        template, script = _template()
        page = template.render(
            summary=summary, analysis=analysis, files=self.files, left_out=self.left_out,
            script=script, script_hash=_hash(script),
            **overview(findings, titles, {f.name: f.anchor for f in self.files}),
        )
        path = directory / HTML_REPORT
        path.write_text(page, encoding="utf-8")
        return path


def overview(findings: list[Finding], titles: Mapping[str, str], anchors: Mapping[str, str]) -> dict:
    """The overview's tables, from every finding of the run."""
    changes = [f for f in findings if f.operation.is_change]
    by_rule = Counter(f.code for f in changes)
    others = Counter((f.code, f.operation.value) for f in findings if not f.operation.is_change)
    per_file: dict[str, Counter] = {}
    for finding in findings:
        per_file.setdefault(finding.file, Counter())[finding.operation] += 1
    ranked = sorted(per_file.items(), key=lambda item: (-_changes(item[1]), -item[1][Operation.UNSUPPORTED], item[0]))
    unsupported = sorted((f for f in findings if f.operation is Operation.UNSUPPORTED), key=lambda f: (f.file, f.start_line))
    return {
        "rules": [(code, titles.get(code, ""), count) for code, count in sorted(by_rule.items())],
        "other_rules": [(code, operation, titles.get(code, ""), count) for (code, operation), count in sorted(others.items())],
        "operations": [(operation.value, count) for operation in Operation
                       if (count := sum(1 for f in findings if f.operation is operation))],
        "ranked": [(name, anchors.get(name), _changes(counts), counts[Operation.UNSUPPORTED], sum(counts.values()))
                   for name, counts in ranked[:MAX_LISTED]],
        "ranked_more": max(0, len(ranked) - MAX_LISTED),
        "unsupported": [(f, anchors.get(f.file)) for f in unsupported[:MAX_LISTED]],
        "unsupported_more": max(0, len(unsupported) - MAX_LISTED),
        "total_changes": len(changes),
    }


def _changes(counts: Counter) -> int:
    return sum(count for operation, count in counts.items() if operation.is_change)


def side_by_side(
    old: list[str], new: list[str], findings: list[Finding], context: int = CONTEXT, limit: int | None = None,
) -> tuple[list[Row], bool]:
    """The rows of a side-by-side diff of `old` and `new` (lines, without their ends): each change,
    and each line a finding names, with `context` unchanged lines around it (the rest: gaps);
    every finding on the row it is about. Only the rows shown are made (a file may be long): at
    most `limit`, and whether the diff goes on past them."""
    opcodes = _opcodes(old, new)
    marked = sorted({f.start_line - 1 for f in findings if not f.operation.is_change})
    room = len(old) + len(new) + 1 if limit is None else limit + 1  # (one more: to tell a cut)
    rows: list[Row] = []
    for position, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            first, last = position == 0, position == len(opcodes) - 1
            _unchanged(rows, old, (i1, i2, j1), context, first, last, marked)
        else:
            for k in range(min(max(i2 - i1, j2 - j1), room - len(rows))):
                i, j = i1 + k, j1 + k
                rows.append(Row(
                    "changed", i + 1 if i < i2 else None, old[i] if i < i2 else "",
                    j + 1 if j < j2 else None, new[j] if j < j2 else "", at=i + 1 if i < i2 else i2 + 0.5,
                ))
        if len(rows) >= room or (limit is not None and len(rows) == limit and position < len(opcodes) - 1):
            rows = rows[:limit]
            last_line = max((row.old_number or 0 for row in rows), default=0)
            _place(rows, [f for f in findings if f.start_line <= last_line])
            return rows, True
    _place(rows, findings)
    return rows, False


def _unchanged(rows: list[Row], old: list[str], block: tuple[int, int, int], context: int, first: bool, last: bool,
               marked: list[int]) -> None:
    """The rows of an unchanged stretch (`old[i1:i2]`, at `j1` in the new file): `context` lines
    next to the changes before and after it and around each line a finding names; gaps between."""
    i1, i2, j1 = block
    shown = set()
    if not first:
        shown.update(range(i1, min(i2, i1 + context)))
    if not last:
        shown.update(range(max(i1, i2 - context), i2))
    for line in marked[bisect.bisect_left(marked, i1 - context):bisect.bisect_right(marked, i2 + context)]:
        shown.update(range(max(i1, line - context), min(i2, line + context + 1)))
    previous = i1
    for i in sorted(shown):
        if i > previous:
            rows.append(Row("gap", skipped=i - previous))
        rows.append(Row("same", i + 1, old[i], j1 + i - i1 + 1, old[i]))
        previous = i + 1
    if previous < i2 and rows:
        rows.append(Row("gap", skipped=i2 - previous))


def _opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes from `old` to `new`, made between anchors: the lines that occur once in
    each, in the same order (patience diff's idea). A migration changes a few lines of many, so
    most stretches between anchors are equal and compared as such; difflib matches the others.
    A whole file through difflib costs a few percent of a migration (bench/migrate.py)."""
    once_old = {line for line, count in Counter(old).items() if count == 1}
    counts_new = Counter(new)
    where_new = {line: j for j, line in enumerate(new) if counts_new[line] == 1 and line in once_old}
    anchors = []
    for i, line in enumerate(old):
        j = where_new.get(line)
        if j is not None and (not anchors or j > anchors[-1][1]):
            anchors.append((i, j))
    codes: list[tuple[str, int, int, int, int]] = []
    start = (0, 0)  # where the equal stretch being walked began
    i0 = j0 = 0
    for i, j in [*anchors, (len(old), len(new))]:
        if (i != i0 or j != j0) and old[i0:i] != new[j0:j]:
            for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, old[i0:i], new[j0:j]).get_opcodes():
                if tag != "equal":
                    _equal(codes, start, (i0 + a1, j0 + b1))
                    codes.append((tag, i0 + a1, i0 + a2, j0 + b1, j0 + b2))
                    start = (i0 + a2, j0 + b2)
        i0, j0 = i + 1, j + 1
    _equal(codes, start, (len(old), len(new)))
    return codes


def _equal(codes: list, start: tuple[int, int], end: tuple[int, int]) -> None:
    if end[0] > start[0]:
        codes.append(("equal", start[0], end[0], start[1], end[1]))


def _place(rows: list[Row], findings: Iterable[Finding]) -> None:
    """Each finding onto its row: a change onto the changed row of its line in the file as read
    (or, for a line it inserted, as written), else the nearest changed row; anything else onto
    the row of its line as read."""
    changed = [row for row in rows if row.kind == "changed"]
    by_old = {row.old_number: row for row in rows if row.old_number is not None}
    for finding in findings:
        lines = range(finding.start_line, max(finding.start_line, finding.end_line) + 1)
        row = None
        if finding.operation.is_change and changed:
            row = (next((r for r in changed if r.old_number in lines), None)
                   or next((r for r in changed if r.old_number is None and r.new_number in lines), None)
                   or min(changed, key=lambda r: abs(r.at - finding.start_line)))
        if row is None:
            row = by_old.get(finding.start_line) or (rows[-1] if rows else None)
        if row is not None:
            row.findings.append(finding)


def _template():
    """The page's template and its script (ours: the one text not escaped)."""
    global _TEMPLATE
    if _TEMPLATE is None:
        import jinja2  # (here: a run that writes no page does not pay for the import)
        import markupsafe

        environment = jinja2.Environment(
            loader=jinja2.PackageLoader("torchport.report", "templates"), autoescape=True,
            trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        )
        script = environment.loader.get_source(environment, "report.js")[0]
        _TEMPLATE = environment.get_template("index.html.j2"), markupsafe.Markup(script)
    return _TEMPLATE


def _hash(script: str) -> str:
    """The page's policy lets this script run and no other, even one a bug let into the page."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


_TEMPLATE = None
