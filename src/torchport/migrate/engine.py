"""Migrate a file or a tree into a new tree: safety checks, the walk, parallel work, reports.

The input is read-only to us. Every output path is checked to lie inside OUT and outside SRC
before anything is written, `--force` only allows writing into a non-empty OUT (it never
deletes), and a file that cannot be migrated is copied unchanged and listed with the reason.
"""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from torchport import targets
from torchport.migrate.findings import Finding, Operation
from torchport.migrate.source import FileResult, migrate_source

REPORT_DIR = "torchport_report"
SKIPPED_DIRS = {"__pycache__", ".git", ".hg", ".svn"}
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
    tree = src if src.is_dir() else src.parent
    if out == tree or tree in out.parents:
        raise MigrationError(f"output {options.out} lies inside the input {tree}: choose a folder outside it")
    if out in src.parents:
        raise MigrationError(f"output {options.out} contains the input {options.src}: choose a folder beside it")
    if out.exists() and not out.is_dir():
        raise MigrationError(f"output {options.out} exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not options.force and not options.diff:
        raise MigrationError(f"output {options.out} is not empty: pass --force to write into it (nothing is deleted)")
    return src, out


def walk(src: Path, skipped: list[tuple[str, str]]):
    """Relative paths of the files under `src`, never following a link out of it."""
    if src.is_file():
        yield Path(src.name)
        return
    for root, dirs, files in os.walk(src, followlinks=False):
        root_path = Path(root)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in list(dirs):
            path = root_path / name
            if path.is_symlink():
                dirs.remove(name)
                skipped.append((str(path.relative_to(src)), "a linked folder: not followed"))
        for name in sorted(files):
            path = root_path / name
            relative = path.relative_to(src)
            if path.is_symlink():
                resolved = path.resolve()
                if not resolved.is_file() or src not in resolved.parents:
                    skipped.append((str(relative), "a link that leads out of the input (or nowhere): not followed"))
                    continue
            yield relative


def _migrate_one(job: tuple[str, bytes, str]) -> FileResult:
    relative, data, target_name = job
    return migrate_source(data, targets.get(target_name), relative)


def run(options: Options) -> Outcome:
    src, out = check_paths(options)
    outcome = Outcome()
    base = src if src.is_dir() else src.parent
    paths = list(walk(src, outcome.skipped))
    outcome.files = len(paths)
    python = [p for p in paths if p.suffix == ".py"]
    outcome.python_files = len(python)
    if out is not None and not options.diff:
        for relative in paths:
            if relative.suffix != ".py":
                _copy(base / relative, out / relative, outcome)
    jobs = [(str(p), _read(base / p, outcome), options.target) for p in python]
    jobs = [job for job in jobs if job[1] is not None]
    progress = Progress(len(jobs)) if options.progress and len(jobs) >= PROGRESS_MIN_FILES else None
    for (relative, data, _), result in zip(jobs, _map(jobs, options.jobs)):
        if progress:
            progress.step()
        _record(relative, data, result, outcome, options, out)
    if progress:
        progress.done()
    return outcome


def _map(jobs: list, workers: int):
    if workers <= 1 or len(jobs) < 2:
        return map(_migrate_one, jobs)
    pool = ProcessPoolExecutor(max_workers=workers)
    return _closing(pool, pool.map(_migrate_one, jobs, chunksize=max(1, len(jobs) // (workers * 8))))


def _closing(pool: ProcessPoolExecutor, results):
    with pool:
        yield from results


def _read(path: Path, outcome: Outcome) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError as error:
        outcome.skipped.append((str(path), f"could not be read: {error.strerror}"))
        return None


def _copy(source: Path, destination: Path, outcome: Outcome) -> None:
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    except OSError as error:
        outcome.skipped.append((str(source), f"could not be copied: {error.strerror}"))


def _record(relative: str, data: bytes, result: FileResult, outcome: Outcome, options: Options, out: Path | None) -> None:
    outcome.findings.extend(result.findings)
    if result.error:
        outcome.skipped.append((relative, f"not migrated, copied unchanged: {result.error}"))
    if result.changed:
        outcome.changed.append(relative)
        if options.diff:
            outcome.diffs.append(_unified_diff(relative, data, result.source))
    if out is not None and not options.diff:
        destination = out / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(result.source)


def _unified_diff(relative: str, old: bytes, new: bytes) -> str:
    lines = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
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
