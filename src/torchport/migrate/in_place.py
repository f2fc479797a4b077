"""`migrate --in-place`: SRC rewritten where it lies, one whole file at a time.

The one exception to "the input is read-only": the user asked for it. Even then only the Python
files a rule changes (and the launch scripts whose NCCL settings it renames) are touched, each replaced whole (a new file beside it, moved over it with
`os.replace`, its mode kept), so an error, a Ctrl-C or a crash leaves every file either as it was
or as migrated, and no temporary file behind. The other files are not copied anywhere, links are
left as they are, the reports go to a folder outside SRC, and a launcher (--distributed) is only
made where no file of that name exists.

A tree with uncommitted changes is refused (unless --allow-dirty): the migration would be mixed
into the user's own edits, with no commit to diff against or go back to. Outside a git checkout
there is nothing to ask, and the run goes ahead, as ruff --fix, black and pyupgrade do.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from torchport.errors import UsageError
from torchport.migrate.source import FileResult
from torchport.migrate.walk import git_environment

TEMPORARY_PREFIX = ".torchport-"  # what a file being written is called until it is moved into place
DIRTY_SHOWN = 5


def layout(sources: list, out: Path) -> tuple[list, Path]:
    """The sources (engine.Source) named as the user sees them: each file by its path from the
    current folder (or its absolute path, outside it), so that many files of the same name (a
    pre-commit call) stay apart; a source inside another is taken once. `out` (the reports'
    folder), resolved; a UsageError if it lies in SRC."""
    folders = [s.path for s in sources if s.path.is_dir()]
    kept, seen = [], set()
    for source in sources:
        inside = any(folder in source.path.parents for folder in folders)
        if source.path in seen or inside:
            continue
        seen.add(source.path)
        kept.append(replace(source, prefix=_shown(source.path if source.path.is_dir() else source.path.parent)))
    resolved = out.resolve()
    for folder in folders:
        if resolved == folder or folder in resolved.parents:
            raise UsageError(f"the reports' folder {out} lies inside the input {folder}: choose one outside it")
    if resolved.exists() and not resolved.is_dir():
        raise UsageError(f"the reports' folder {out} exists and is not a folder")
    return kept, resolved


def _shown(folder: Path) -> Path:
    try:
        return folder.relative_to(Path.cwd().resolve())
    except ValueError:
        return folder


def refuse_dirty(paths: list[Path]) -> None:
    """A UsageError naming the files under `paths` that git says are not committed (changed,
    staged, new); nothing for paths outside a git checkout."""
    dirty = list(dict.fromkeys(name for path in paths for name in uncommitted(path)))
    if not dirty:
        return
    shown = ", ".join(dirty[:DIRTY_SHOWN]) + (f" and {len(dirty) - DIRTY_SHOWN} more" if len(dirty) > DIRTY_SHOWN else "")
    files = "1 file under SRC has" if len(dirty) == 1 else f"{len(dirty)} files under SRC have"
    raise UsageError(
        f"--in-place: {files} uncommitted changes ({shown}): commit or stash them first, or pass --allow-dirty"
    )


def uncommitted(path: Path) -> list[str]:
    """What `git status --porcelain` lists under `path` (relative to the checkout's top);
    empty outside a checkout, or where git is not installed."""
    git = shutil.which("git")
    folder = path if path.is_dir() else path.parent
    if git is None:
        return []
    command = [git, "-c", "core.fsmonitor=false", "-C", str(folder), "status", "--porcelain", "-z",
               "--untracked-files=all", "--", str(path.resolve())]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=git_environment(), check=False)
    except OSError:
        return []
    if done.returncode != 0:  # not a checkout
        return []
    return _porcelain_paths(done.stdout)


def _porcelain_paths(output: bytes) -> list[str]:
    """The paths of `git status --porcelain -z`: "XY path", where a rename or copy is followed by
    the path it came from (not listed again)."""
    names, entries = [], iter(output.split(b"\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        names.append(os.fsdecode(entry[3:]))
        if entry[:1] in (b"R", b"C"):
            next(entries, None)
    return names


def temporary_reports() -> Path:
    """A new folder for the reports of a run that was not given one (printed at its end)."""
    return Path(tempfile.mkdtemp(prefix="torchport-report-"))


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """`data` written beside `path`, then moved over it: a reader, a crash or a Ctrl-C finds the
    old file or the new one, never a part of one, and the temporary file never stays. The file
    keeps its mode (`mode`: for a new one)."""
    mode = stat.S_IMODE(path.stat().st_mode) if mode is None else mode
    temporary = None
    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=TEMPORARY_PREFIX, suffix=".tmp")
        temporary = Path(name)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise


class InPlaceWriter:
    """The engine's writer for --in-place: rewrites the changed Python files where they are and
    makes nothing else in SRC but a launcher that is not there yet."""

    UNCHANGED = "left unchanged"  # what became of a file that could not be migrated

    def __init__(self, outcome) -> None:
        self.outcome = outcome

    def reporting_to(self, outcome) -> InPlaceWriter:
        return InPlaceWriter(outcome)

    def copy(self, origin: Path, name: str) -> None:
        """(A file that is not Python stays where it is.)"""

    def link(self, name: str, text: str) -> None:
        """(A link stays as it is.)"""

    def write(self, origin: Path, name: str, result: FileResult) -> None:
        if not result.changed:
            return
        try:
            if origin.read_bytes() == result.source:
                return
            replace_file(origin, result.source)
        except OSError as error:
            self.outcome.skipped.append((name, f"could not be rewritten, left as it was: {error.strerror or error}"))
            return
        self.outcome.written += 1

    def create(self, name: str, data: bytes, executable: bool = False) -> None:
        """A file of torchport's own (a launcher), only where the name is free."""
        path = Path(name)
        if path.exists() or path.is_symlink():
            self.outcome.skipped.append((name, "a file of that name exists: not made in place"))
            return
        try:
            replace_file(path, data, mode=0o755 if executable else 0o644)
        except OSError as error:
            self.outcome.skipped.append((name, f"could not be written: {error.strerror or error}"))
            return
        self.outcome.written += 1
