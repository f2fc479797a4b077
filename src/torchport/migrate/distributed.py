"""`migrate --distributed` for one file: the distribute steps rewrite it first (in CUDA's own
dialect), then it is migrated as usual; the migration's rows, at lines of the rewritten text,
are mapped back to the lines of the file as read. A file the steps cannot parse or read is
migrated as it would be without --distributed."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, replace
from typing import Callable

from torchport.distribute.driver import Distribution, Options, distribute_source
from torchport.distribute.changes import NOTE
from torchport.distribute.lines import back, line_map
from torchport.errors import internal_error
from torchport.findings import Finding, Operation
from torchport.migrate.rules.async_keyword import AsyncKeywordRule
from torchport.migrate.source import FileResult
from torchport.syntax import BEFORE_37, syntax_problem

# A file that trains imports torch: one that never says it is not read by the steps at all.
MENTIONS_TORCH = re.compile(rb"\btorch\b")
PRE_37_ARGUMENT = re.compile(AsyncKeywordRule.mentions)


@dataclass(frozen=True)
class Request:
    """What `--distributed` asks of a run (the same for every file of it)."""

    batch: str = "global"
    entries: frozenset[str] | None = None  # --entry: the entry scripts by name in OUT (None: detected)

    def options_for(self, name: str) -> Options:
        entry = None if self.entries is None else name in self.entries
        return Options(batch=self.batch, entry=entry)


def distribute_then_migrate(data: bytes, path: str, request: Request, migrate: Callable[..., FileResult]) -> FileResult:
    """`data` (bytes, any declared encoding) made to run as one of N processes, then migrated
    (`migrate(data, laid_out=None)`: as a file is without --distributed, reading `laid_out`, the
    layout of LibCST's tree of `data` where the steps hold one, rather than parsing it again). A
    pre-3.7 file's `async=` arguments are renamed first (TP024, on the tokens, lines unchanged),
    so the steps read it in the same run."""
    renamed, rows = AsyncKeywordRule.rewrite(data, path) if PRE_37_ARGUMENT.search(data) else (data, [])
    result = _distribute_then_migrate(renamed, path, request, migrate)
    if not rows or result.error is not None:
        return result
    return replace(result, findings=sorted(rows + result.findings, key=lambda f: (f.start_line, f.code)))


def _distribute_then_migrate(data: bytes, path: str, request: Request, migrate: Callable[..., FileResult]) -> FileResult:
    read = decoded(data) if MENTIONS_TORCH.search(data) else None
    if read is None:
        return migrate(data)
    text, encoding = read
    try:
        done = distribute_source(text, path, request.options_for(path))
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a step's bug costs the file its distribution only)
        plain = migrate(data)
        why = f"not distributed: {internal_error(error)}"
        return _with_rows(plain, [_not_distributed(path, why)], Distribution(True, False, why))
    plan = done.plan
    if plan is None:  # (not valid Python to LibCST: migrated, or reported, as before)
        problem = syntax_problem(data, path)
        if problem is None or problem.era != BEFORE_37:
            return migrate(data)
        why = (f"not distributed: {problem} (a name or parameter called async, which no rewrite renames): "
               "rename it, then migrate --distributed again")
        return _with_rows(migrate(data), [_not_distributed(path, why)], Distribution(False, False, why))
    notes = done.findings
    laid_out = done.laid_out if encoding == "utf-8" else None  # (a tree from text knows no other encoding)
    if not done.changed:
        why = "" if not plan.entry else plan.already or "nothing to change"
        return _with_rows(migrate(data, laid_out=laid_out), notes, Distribution(plan.entry, False, why))
    try:
        rewritten = done.source.encode(encoding)
    except UnicodeEncodeError:
        rewritten = None
    result = migrate(rewritten, laid_out=laid_out) if rewritten is not None else None
    if result is None or result.error is not None:
        plain = migrate(data)
        why = f"not distributed: the rewritten file could not be migrated ({result.error if result else 'encoding'})"
        return _with_rows(plain, [_not_distributed(path, why)], Distribution(plan.entry, False, why))
    lines = line_map(text, done.source)
    migrated = [mapped_back(finding, lines) for finding in result.findings]
    findings = sorted(notes + migrated, key=lambda f: (f.start_line, f.code))
    return FileResult(result.source, findings, distribution=Distribution(plan.entry, True))


def _not_distributed(path: str, why: str) -> Finding:
    """The file's TP200 row saying why it was migrated as it is, without --distributed."""
    return Finding(path, 0, 0, NOTE.code, Operation.NOTE, why, NOTE.subject)


def _with_rows(result: FileResult, rows: list[Finding], distribution: Distribution) -> FileResult:
    if result.error is not None:
        return replace(result, distribution=distribution)
    findings = sorted(rows + result.findings, key=lambda f: (f.start_line, f.code))
    return replace(result, findings=findings, distribution=distribution)


def mapped_back(finding: Finding, lines: list[int]) -> Finding:
    """`finding`, at a line of a rewritten text, at the line of the text before it (`line_map`)."""
    if not finding.start_line:  # (a row about the file as a whole)
        return finding
    start = back(lines, finding.start_line)
    return replace(finding, start_line=start, end_line=max(start, back(lines, finding.end_line)))


def decoded(data: bytes) -> tuple[str, str] | None:
    """(text, encoding) as Python reads the file (a coding cookie, a BOM); None where it cannot."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None

