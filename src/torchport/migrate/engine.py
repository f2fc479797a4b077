"""Migrate a file or a tree into a new tree: safety checks, the walk, parallel work, reports.

The input is read-only to us. Every output path is checked to lie inside OUT and outside SRC
before anything is written, `--force` only allows writing into a non-empty OUT (it never
deletes), and a file that cannot be migrated is copied unchanged and listed with the reason.
"""

from __future__ import annotations

import difflib
import io
import os
import shutil
import sys
import tempfile
import tokenize
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from torchport import targets
from torchport.findings import Finding, Operation
from torchport.migrate.source import MENTIONS_CUDA, FileResult, migrate_source
from torchport.migrate.walk import walk

REPORT_DIR = "torchport_report"
PROGRESS_MIN_FILES = 20


class MigrationError(Exception):
    """The request itself is wrong (paths, options): nothing was written."""


@dataclass
class Options:
    src: Path
    out: Path | None
    target: str
    force: bool = False
    diff: bool = False
    jobs: int = 1
    progress: bool = False


@dataclass
class Outcome:
    files: int = 0
    python_files: int = 0
    changed: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, reason): copied unchanged or not copied
    diffs: list[str] = field(default_factory=list)

    def count(self, operation: Operation) -> int:
        return sum(1 for f in self.findings if f.operation is operation)

    def changes_by_rule(self) -> dict[str, int]:
        return dict(sorted(Counter(f.code for f in self.findings if f.operation.is_change).items()))

    def summary(self, options: Options) -> dict:
        return {
            "target": options.target,
            "source": str(options.src),
            "output": str(options.out) if options.out else None,
            "files": self.files,
            "python_files": self.python_files,
            "files_changed": len(self.changed),
            "changes": sum(self.changes_by_rule().values()),
            "changes_by_rule": self.changes_by_rule(),
            "unsupported": self.count(Operation.UNSUPPORTED),
            "unknown": self.count(Operation.UNKNOWN),
            "notes": self.count(Operation.NOTE),
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
        }


def check_paths(options: Options) -> tuple[Path, Path | None]:
    src = options.src
    if not src.exists() and not src.is_symlink():
        raise MigrationError(f"{src}: no such file or directory")
    if not (src.is_dir() or src.is_file()):
        raise MigrationError(f"{src}: not a regular file or directory")
    src = src.resolve()
    if options.out is None:
        if not options.diff:
            raise MigrationError("say where to write the migrated code with -o OUT (or preview with --diff)")
        return src, None
    out = options.out.resolve()
    if src.is_dir() and (out == src or src in out.parents):
        raise MigrationError(f"output {options.out} lies inside the input {options.src}: choose a folder outside it")
    if src.is_file() and out == src.parent:
        # OUT/<name> would be the input file itself
        raise MigrationError(f"output {options.out} is the folder of the input {options.src}: choose another folder")
    if out in src.parents:
        raise MigrationError(f"output {options.out} contains the input {options.src}: choose a folder beside it")
    if out.exists() and not out.is_dir():
        raise MigrationError(f"output {options.out} exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not options.force and not options.diff:
        raise MigrationError(f"output {options.out} is not empty: pass --force to write into it (nothing is deleted)")
    report = out / REPORT_DIR
    if not options.diff and (report.is_symlink() or (report.exists() and not report.is_dir())):
        raise MigrationError(f"{report} exists and is not a folder: move it away")
    return src, out


def _migrate_one(job: tuple[str, bytes, str]) -> FileResult:
    relative, data, target_name = job
    try:
        return migrate_source(data, targets.get(target_name), relative)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (a rule's bug must not stop the run)
        first = (str(error).strip().splitlines() or [""])[0]
        return FileResult(data, error=f"internal error ({type(error).__name__}: {first}); copied unchanged")


class _Writer:
    """Writes under OUT, never through a link that leads out of OUT or into SRC."""

    def __init__(self, src: Path, out: Path, outcome: Outcome) -> None:
        self.src = src  # resolved: the input folder, or the input file
        self.out = out  # resolved
        self.outcome = outcome
        out.mkdir(parents=True, exist_ok=True)

    def _refusal(self, destination: Path) -> str | None:
        if destination.is_symlink():
            return "its place in the output is a link: not written through it"
        try:
            resolved = destination.resolve()
        except (OSError, RuntimeError):  # a loop of links
            return "its place in the output is a loop of links: not written"
        if resolved == self.src or self.src in resolved.parents:
            return "its place in the output leads into the input through a link: not written"
        if self.out not in resolved.parents:
            return "its place in the output leads out of it through a link: not written"
        return None

    @staticmethod
    def _replace(destination: Path, fill) -> None:
        """Write a new file beside `destination` and move it into place: a file already there is
        replaced, never written into (it may be a hard link to a file of the input)."""
        handle, name = tempfile.mkstemp(dir=destination.parent, prefix=".torchport-", suffix=".tmp")
        os.close(handle)
        temporary = Path(name)
        try:
            fill(temporary)
            os.replace(temporary, destination)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def destination(self, relative: Path | str) -> Path | None:
        destination = self.out / relative
        reason = self._refusal(destination)
        if reason is not None:
            self.outcome.skipped.append((str(relative), reason))
            return None
        return destination

    def copy(self, base: Path, relative: Path) -> None:
        destination = self.destination(relative)
        if destination is None:
            return
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            self._replace(destination, lambda temporary: shutil.copy2(base / relative, temporary))
        except OSError as error:
            self.outcome.skipped.append((str(relative), f"could not be copied: {error.strerror or error}"))

    def write(self, base: Path, relative: str, result: FileResult) -> None:
        destination = self.destination(relative)
        if destination is None:
            return
        # keep the mode (an executable script stays one); an unchanged file keeps its times too
        keep = shutil.copymode if result.changed else shutil.copystat

        def fill(temporary: Path) -> None:
            temporary.write_bytes(result.source)
            keep(base / relative, temporary)

        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            self._replace(destination, fill)
        except OSError as error:
            self.outcome.skipped.append((relative, f"could not be written: {error.strerror or error}"))


def run(options: Options) -> Outcome:
    src, out = check_paths(options)
    outcome = Outcome()
    base = src if src.is_dir() else src.parent
    paths = list(walk(src, outcome.skipped))
    outcome.files = len(paths)
    python = [p for p in paths if p.suffix == ".py"]
    outcome.python_files = len(python)
    writer = None
    if out is not None and not options.diff:
        try:
            writer = _Writer(src, out, outcome)
        except OSError as error:
            raise MigrationError(f"cannot create the output {options.out}: {error.strerror or error}") from None
        for relative in paths:
            if relative.suffix != ".py":
                writer.copy(base, relative)
    jobs = [(str(p), _read(base, p, outcome), options.target) for p in python]
    jobs = [job for job in jobs if job[1] is not None]
    progress = Progress(len(jobs)) if options.progress and len(jobs) >= PROGRESS_MIN_FILES else None
    for (relative, data, _), result in zip(jobs, _map(jobs, options.jobs)):
        if progress:
            progress.step()
        _record(base, relative, data, result, outcome, options, writer)
    if progress:
        progress.done()
    return outcome


def _map(jobs: list, workers: int):
    """The results of `jobs`, in order. Only files that mention CUDA go to the workers."""
    mentions = [MENTIONS_CUDA.search(job[1]) is not None for job in jobs]
    work = [job for job, mentioned in zip(jobs, mentions) if mentioned]
    if workers <= 1 or len(work) < 2:
        return map(_migrate_one, jobs)
    return _merge(jobs, mentions, _pooled(work, min(workers, len(work))))


def _pooled(work: list, workers: int):
    """Results in the order of `work`; the biggest files are handed out first, so that one large
    file started last does not keep the other workers waiting."""
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        order = sorted(range(len(work)), key=lambda i: -len(work[i][1]))
        futures = {i: pool.submit(_migrate_one, work[i]) for i in order}
        for i in range(len(work)):
            yield futures.pop(i).result()
    finally:  # on an interrupt, what has not started is dropped
        pool.shutdown(wait=True, cancel_futures=True)


def _merge(jobs: list, mentions: list[bool], pooled):
    """Every job's result: the pool's for those that mention CUDA, the file unchanged otherwise."""
    for job, mentioned in zip(jobs, mentions):
        yield next(pooled) if mentioned else FileResult(job[1])


def _read(base: Path, relative: Path, outcome: Outcome) -> bytes | None:
    try:
        return (base / relative).read_bytes()
    except OSError as error:
        outcome.skipped.append((str(relative), f"could not be read: {error.strerror or error}"))
        return None


def _record(
    base: Path, relative: str, data: bytes, result: FileResult, outcome: Outcome, options: Options, writer: _Writer | None
) -> None:
    outcome.findings.extend(result.findings)
    if result.error:
        outcome.skipped.append((relative, f"not migrated, copied unchanged: {result.error}"))
    if result.changed:
        outcome.changed.append(relative)
        if options.diff:
            outcome.diffs.append(_unified_diff(relative, data, result.source))
    if writer is not None:
        writer.write(base, relative, result)


def _text(source: bytes) -> str:
    """`source` decoded as Python reads it (a coding cookie, a BOM), for showing."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return source.decode("utf-8", "replace")


def _unified_diff(relative: str, old: bytes, new: bytes) -> str:
    lines = difflib.unified_diff(
        _text(old).splitlines(keepends=True),
        _text(new).splitlines(keepends=True),
        fromfile=f"a/{relative}",
        tofile=f"b/{relative}",
    )
    return "".join(lines)


class Progress:
    """A one-line progress bar on stderr (only drawn for a terminal)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done_count = 0

    def step(self) -> None:
        self.done_count += 1
        filled = 30 * self.done_count // self.total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done_count}/{self.total} files")
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\n")
