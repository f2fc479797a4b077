"""Migrate a file or a tree into a new tree: safety checks, the walk, parallel work, reports.

The input is read-only to us (but for --in-place: in_place.py). Every output path is checked to
lie inside OUT and outside SRC before anything is written, `--force` only allows writing into a
non-empty OUT (it never deletes), and a file that cannot be migrated is copied unchanged and
listed with the reason.
"""

from __future__ import annotations

import difflib
import io
import os
import shutil
import tempfile
import threading
import tokenize

try:
    import fcntl
except ImportError:  # (Windows: no lock)
    fcntl = None
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from torchport.distribute import launchers
from torchport.distribute.command_line import MAX_TEXT, is_documentation
from torchport.distribute.changes import CODES as DISTRIBUTE_CODES
from torchport.migrate.distributed import Request
from torchport.migrate import from_npu
from torchport import targets
from torchport.errors import is_internal_error
from torchport.findings import Finding, Operation
from torchport.migrate.selection import ALL_PREFIX, RuleSelection
from torchport.migrate import in_place, shell_settings
from torchport.migrate.source import FileResult
from torchport.migrate.suppression import SKIP_REASON
from torchport.migrate.progress import progress_for
from torchport.migrate.walk import Selection, scan
from torchport.migrate.workers import FILE_MEMORY, FILE_TIMEOUT, Choices, Job, migrate_guarded
from torchport.report.html import HTML_REPORT, HtmlReport
from torchport.report.tables import write_reports

REPORT_DIR = "torchport_report"


class MigrationError(Exception):
    """The request itself is wrong (paths, options): nothing was written."""


@dataclass
class Options:
    sources: list[Path]
    out: Path | None
    target: str
    force: bool = False
    diff: bool = False
    jobs: int = 1
    progress: bool = False  # on stderr: a bar on a terminal, a line every few seconds otherwise
    selection: Selection = field(default_factory=Selection)
    file_timeout: float = FILE_TIMEOUT
    file_memory: int = FILE_MEMORY
    apply_affinity: bool = False  # make the affinity swaps that keep behaviour
    analysis_only: bool = False  # write the reports only, not the migrated tree (`torchport analyze`)
    reports: set[str] | None = None  # the report files to write (None: all of them)
    distribute: Request | None = None  # --distributed: training entry scripts made to run as N processes
    entries: list[Path] = field(default_factory=list)  # --entry: the entry scripts (else detected)
    apex: str | None = None  # --apex: "native" or "keep" (None: keep where the target has an apex of its own)
    select: tuple[str, ...] = (ALL_PREFIX,)  # --select (with --extend-select): code prefixes of the rules that run
    ignore: tuple[str, ...] = ()  # --ignore: code prefixes of the rules that do not
    in_place: bool = False  # --in-place: rewrite the sources themselves; `out` is the reports' folder
    source: str = from_npu.FROM_CUDA  # --from: the dialect the code is written in ("npu": converted to CUDA's first)
    amp: str | None = None  # --amp: "torch", "apex" or "off" (None: the target's default: torch on npu, else off)

    def choices(self) -> Choices:
        """What this run asks of each file."""
        return Choices(self.target, self.apply_affinity, self.distribute, self.apex, RuleSelection(self.select, self.ignore),
                       self.source, self.amp)


@dataclass(frozen=True)
class Source:
    """One SRC: its resolved path, and the folder of OUT (relative) its entries go to."""

    path: Path
    prefix: Path  # "." for a single SRC (OUT mirrors it) and for files; the folder's name otherwise

    @property
    def base(self) -> Path:
        return self.path if self.path.is_dir() else self.path.parent


@dataclass
class Outcome:
    files: int = 0  # regular files taken: each is written into OUT, or listed in `skipped` if it could not be
    python_files: int = 0
    written: int = 0  # files now in OUT (migrated, or copied as they were)
    links: int = 0  # links reproduced in OUT
    not_taken: int = 0  # entries of SRC that could not be taken (a loop of links, an unreadable folder...)
    changed: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, reason): copied unchanged or not copied
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): left out on purpose
    diffs: list[str] = field(default_factory=list)
    distributed: list[str] = field(default_factory=list)  # --distributed: the files it changed
    left_alone: list[tuple[str, str]] = field(default_factory=list)  # entry scripts it did not, and why
    # (launcher, its script, where its command line came from, the words of it to fill in)
    launchers: list[tuple[str, str, str, tuple[str, ...]]] = field(default_factory=list)
    apex: dict[str, list[str]] = field(default_factory=dict)  # what --apex made of each file: way -> files
    suppressed: list[Finding] = field(default_factory=list)  # rows a suppression comment took out (# noqa: TP003)
    npu_code: list[str] = field(default_factory=list)  # files that use torch_npu and never CUDA (from_npu.is_npu_code)
    npu_converted: list[str] = field(default_factory=list)  # --from npu: the files its conversion changed
    skipped_on_request: list[str] = field(default_factory=list)  # files that say `# torchport: skip-file`
    page: HtmlReport | None = field(default=None, repr=False)  # index.html's diffs, made as the files come

    def count(self, operation: Operation) -> int:
        return sum(1 for f in self.findings if f.operation is operation)

    def internal_errors(self) -> list[tuple[str, str]]:
        """(file, what failed) for each bug of torchport's that cost a file, or one step of a file:
        a skipped file's reason or a row that names an internal error."""
        found = [(file, reason) for file, reason in self.skipped if is_internal_error(reason)]
        return found + [(f.file, f.message) for f in self.findings if is_internal_error(f.message)]

    def changes_by_rule(self) -> dict[str, int]:
        return dict(sorted(Counter(f.code for f in self.findings if f.operation.is_change).items()))

    def summary(self, options: Options) -> dict:
        summary = self._summary(options)
        summary["apex"] = {
            "mode": options.choices().apex_mode,
            "native": self.apex.get("native", []),  # rewritten to torch.amp, torch DDP, torchport.optim
            "stand_in": self.apex.get("compat", []),  # importing torchport.compat.apex instead
            "kept": self.apex.get("kept", []),  # importing apex as they did
        }
        summary["from"] = options.source
        summary["npu_code"] = {
            "files": self.npu_code,  # written for the NPU (torch_npu, .npu(), torch.npu) and never CUDA
            "converted": self.npu_converted,  # --from npu: rewritten into CUDA's dialect before the migration
            "hint": self.npu_hint(options),  # what `migrate` says of a tree of NPU code without --from npu
        }
        if options.distribute is not None:
            summary["distributed"] = {
                "batch": options.distribute.batch,
                "files": self.distributed,
                "left_alone": [{"file": f, "reason": r} for f, r in self.left_alone],
                "launchers": [{"launcher": n, "script": s, "command_line": c, "to_fill_in": list(p)}
                              for n, s, c, p in self.launchers],
            }
        return summary

    def npu_hint(self, options: Options) -> str | None:
        """The line suggesting --from npu, where files look like NPU code and were read as CUDA's."""
        if not self.npu_code or options.source != from_npu.FROM_CUDA:
            return None
        return from_npu.npu_hint(" ".join(str(path) for path in options.sources), len(self.npu_code), self.python_files)

    def _summary(self, options: Options) -> dict:
        return {
            "target": options.target,
            "source": [str(path) for path in options.sources],
            "output": str(options.out) if options.out and not (options.diff or options.in_place) else None,
            "in_place": options.in_place,  # the sources themselves rewritten ("files_written" of them)
            "entries": self.files + self.links + self.not_taken + len(self.excluded),
            "files": self.files,
            "python_files": self.python_files,
            "files_written": self.written,
            "links": self.links,
            "not_taken": self.not_taken,
            "files_changed": len(self.changed),
            "changes": sum(self.changes_by_rule().values()),
            "changes_by_rule": self.changes_by_rule(),
            "unsupported": self.count(Operation.UNSUPPORTED),
            "unknown": self.count(Operation.UNKNOWN),
            "notes": self.count(Operation.NOTE),
            "precision_advice": self.count(Operation.PRECISION),
            "performance_advice": self.count(Operation.PERFORMANCE),
            "affinity": self.count(Operation.AFFINITY),
            "suppressed": len(self.suppressed),
            "suppressed_by_rule": dict(sorted(Counter(f.code for f in self.suppressed).items())),
            "internal_errors": [{"file": f, "reason": r} for f, r in self.internal_errors()],
            "skipped_on_request": self.skipped_on_request,
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "excluded": [{"path": f, "reason": r} for f, r in self.excluded],
        }


def check_paths(options: Options) -> tuple[list[Source], Path | None]:
    """The sources and OUT, resolved; a MigrationError (nothing written) if they cannot work together."""
    sources = [_check_source(path) for path in options.sources]
    if options.in_place:
        return in_place.layout(sources, options.out)
    if len(sources) > 1:
        sources = [Source(s.path, Path(s.path.name) if s.path.is_dir() else Path(".")) for s in sources]
        names = Counter(s.prefix if s.path.is_dir() else Path(s.path.name) for s in sources)
        clash = next((name for name, count in names.items() if count > 1), None)
        if clash is not None:
            raise MigrationError(f"two inputs would both be written to {clash} in OUT: migrate them one at a time")
    if options.out is None:
        if not options.diff:
            raise MigrationError("say where to write the migrated code with -o OUT (or preview with --diff)")
        return sources, None
    out = options.out.resolve()
    for source, given in zip(sources, options.sources):
        src = source.path
        if src.is_dir() and (out == src or src in out.parents):
            raise MigrationError(f"output {options.out} lies inside the input {given}: choose a folder outside it")
        if src.is_file() and out == src.parent:
            # OUT/<name> would be the input file itself
            raise MigrationError(f"output {options.out} is the folder of the input {given}: choose another folder")
        if out in src.parents:
            raise MigrationError(f"output {options.out} contains the input {given}: choose a folder beside it")
    if out.exists() and not out.is_dir():
        raise MigrationError(f"output {options.out} exists and is not a folder")
    report = out / REPORT_DIR
    if not options.diff and (report.is_symlink() or (report.exists() and not report.is_dir())):
        raise MigrationError(f"{report} exists and is not a folder: move it away")
    return sources, out


def _check_source(src: Path) -> Source:
    if not src.exists() and not src.is_symlink():
        raise MigrationError(f"{src}: no such file or directory")
    try:
        resolved = src.resolve(strict=True)
    except (OSError, RuntimeError):
        raise MigrationError(f"{src}: a link that leads nowhere (or a loop of links)") from None
    if not (resolved.is_dir() or resolved.is_file()):
        raise MigrationError(f"{src}: not a regular file or directory")
    return Source(resolved, Path("."))


@contextmanager
def claimed(out: Path, options: Options):
    """OUT, created if need be and held for this run alone: a second run into it is refused, and
    so is an OUT that cannot be written, before any work starts."""
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle = os.open(out, os.O_RDONLY)
    except OSError as error:
        raise MigrationError(f"cannot create the output {options.out}: {error.strerror or error}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise MigrationError(f"another torchport migrate is writing into {options.out}: wait for it to end") from None
        if not created and not options.force and any(out.iterdir()):
            raise MigrationError(f"output {options.out} is not empty: pass --force to write into it (nothing is deleted)")
        for folder in (out, out / REPORT_DIR):
            try:
                folder.mkdir(exist_ok=True)
                os.close((probe := tempfile.mkstemp(dir=folder, prefix=".torchport-"))[0])
                os.unlink(probe[1])
            except OSError as error:
                raise MigrationError(f"cannot write into {folder}: {error.strerror or error}") from None
        yield out
    except MigrationError:
        if created:
            shutil.rmtree(out, ignore_errors=True)  # (it holds nothing but what this run made)
        raise
    finally:
        os.close(handle)


class Writer:
    """Writes under OUT, never through a link that leads out of OUT or into SRC."""

    UNCHANGED = "copied unchanged"  # what became of a file that could not be migrated

    def __init__(self, sources: list[Path], out: Path, outcome: Outcome) -> None:
        self.sources = sources  # resolved: input folders or files
        self.out = out  # resolved
        self.outcome = outcome

    def _refusal(self, destination: Path) -> str | None:
        if destination.is_symlink():
            return "its place in the output is a link: not written through it"
        try:
            resolved = destination.resolve()
        except (OSError, RuntimeError):  # a loop of links
            return "its place in the output is a loop of links: not written"
        if any(resolved == src or src in resolved.parents for src in self.sources):
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

    def reporting_to(self, outcome: Outcome) -> Writer:
        """The same writer, counting what it writes and skips into `outcome`."""
        return Writer(self.sources, self.out, outcome)

    def destination(self, name: str) -> Path | None:
        destination = self.out / name
        reason = self._refusal(destination)
        if reason is not None:
            self.outcome.skipped.append((name, reason))
            return None
        return destination

    def copy(self, origin: Path, name: str) -> None:
        self._put(name, lambda temporary: shutil.copy2(origin, temporary), "could not be copied")

    def write(self, origin: Path, name: str, result: FileResult) -> None:
        # keep the mode (an executable script stays one); an unchanged file keeps its times too
        keep = shutil.copymode if result.changed else shutil.copystat

        def fill(temporary: Path) -> None:
            temporary.write_bytes(result.source)
            keep(origin, temporary)

        self._put(name, fill, "could not be written")

    def create(self, name: str, data: bytes, executable: bool = False) -> None:
        """A file of torchport's own (a launcher) at `name`."""

        def fill(temporary: Path) -> None:
            temporary.write_bytes(data)
            if executable:
                temporary.chmod(0o755)

        self._put(name, fill, "could not be written")

    def link(self, name: str, text: str) -> None:
        """A link that stays inside SRC becomes the same link in OUT (`text` is relative)."""
        destination = self.destination(name)
        if destination is None:
            return
        if self.out not in Path(os.path.normpath(destination.parent / text)).parents:
            self.outcome.skipped.append((name, "a link that would lead out of the output: not made"))
            return
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            temporary = destination.with_name(f".torchport-{os.getpid()}-{destination.name}")
            temporary.unlink(missing_ok=True)
            os.symlink(text, temporary)
            os.replace(temporary, destination)
            self.outcome.links += 1
        except OSError as error:
            self.outcome.skipped.append((name, f"the link could not be made: {error.strerror or error}"))

    def _put(self, name: str, fill, failure: str) -> None:
        destination = self.destination(name)
        if destination is None:
            return
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            self._replace(destination, fill)
            self.outcome.written += 1
        except OSError as error:
            self.outcome.skipped.append((name, f"{failure}: {error.strerror or error}"))


def run(options: Options) -> Outcome:
    """Migrate every source; write OUT and its reports unless this is a --diff."""
    sources, out = check_paths(options)
    if options.entries:
        options = replace(options, distribute=replace(options.distribute or Request(), entries=_entry_names(sources, options.entries)))
    outcome = Outcome()
    if out is None or options.diff:
        _migrate(sources, None, options, outcome)
        return outcome
    with claimed(out, options):
        writer = None if options.analysis_only else _writer(sources, out, outcome, options)
        outcome.page = HtmlReport() if options.reports is None or HTML_REPORT in options.reports else None
        _migrate(sources, writer, options, outcome)
        write_reports(
            out / REPORT_DIR, outcome.findings, outcome.skipped, outcome.summary(options), options.reports,
            distributed_codes=frozenset(DISTRIBUTE_CODES) if options.distribute is not None else frozenset(),
        )
        if outcome.page is not None:
            from torchport.migrate.codes import rule_names

            outcome.page.write(out / REPORT_DIR, outcome.findings, outcome.summary(options), rule_names(), options.analysis_only)
    return outcome


def _writer(sources: list[Source], out: Path, outcome: Outcome, options: Options):
    if options.in_place:
        return in_place.InPlaceWriter(outcome)
    return Writer([s.path for s in sources], out, outcome)


def _migrate(sources: list[Source], writer: Writer | None, options: Options, outcome: Outcome) -> None:
    python: dict[str, Path] = {}  # name in OUT -> the input file
    documentation: dict[str, Path] = {}  # shell scripts and markdown: where --distributed finds command lines
    names: set[str] = set()  # every name the tree takes in OUT
    copies: list[tuple[Path, str]] = []  # the other files: (input file, name in OUT)
    scripts: dict[str, Path] = {}  # shell scripts whose NCCL settings and visible devices the target renames or notes
    target = targets.get(options.target)
    script_codes = tuple(code for code in shell_settings.CODES if options.choices().rules.allows(code))
    for source in sources:
        tree = scan(source.path, options.selection)

        def named(relative: Path) -> str:
            return (source.prefix / relative).as_posix()

        outcome.files += len(tree.files)
        outcome.not_taken += len(tree.skipped)
        outcome.skipped += [(named(path), reason) for path, reason in tree.skipped]
        outcome.excluded += [(named(path), reason) for path, reason in tree.excluded]
        for relative, text in tree.links:
            names.add(named(relative))
            if writer is None:
                outcome.links += 1
            else:
                writer.link(named(relative), text)
        for relative in tree.files:
            names.add(named(relative))
            if is_documentation(relative.name):
                documentation[named(relative)] = source.base / relative
            if relative.suffix == ".py":
                python[named(relative)] = source.base / relative
            elif script_codes and shell_settings.applies(relative.name, target):
                scripts[named(relative)] = source.base / relative
            elif writer is not None:
                copies.append((source.base / relative, named(relative)))
    for name, origin in scripts.items():  # (small: read here; the copies, if unchanged, go with the others)
        if not _launch_script(origin, name, target, outcome, options, writer, script_codes) and writer is not None:
            copies.append((origin, name))
    outcome.python_files = len(python)
    jobs = (Job(name, data) for name, origin in python.items() if (data := _read(origin, name, outcome)) is not None)
    progress = progress_for(len(python), options.progress)
    results = migrate_guarded(jobs, options.choices(), options.jobs, options.file_timeout, options.file_memory)
    with Copier(writer, copies, outcome):
        for job, result in results:
            if progress:
                progress.step()
            _record(python[job.relative], job, result, outcome, options, writer)
    if progress:
        progress.done()
    if outcome.distributed:
        _launchers(outcome, options, writer, names, documentation)


def _launch_script(origin: Path, name: str, target, outcome: Outcome, options: Options, writer: Writer | None,
                   codes: tuple[str, ...]) -> bool:
    """A shell script's NCCL settings and visible devices (shell_settings.py, the rules in `codes`): its
    rows, and the script written where one was renamed. False where nothing changed (it is then copied
    like the other files)."""
    data = _documentation(origin)
    if data is None:
        return False
    text, findings = shell_settings.migrate_script(data, name, target, codes)
    outcome.findings += findings
    result = FileResult(text.encode(), findings)
    if not result.changed:
        return False
    outcome.changed.append(name)
    if options.diff:
        outcome.diffs.append(_unified_diff(name, origin.read_bytes(), result.source))
    if writer is not None:
        writer.write(origin, name, result)
    return True


def _launchers(outcome: Outcome, options: Options, writer: Writer | None, names: set[str], documentation: dict[str, Path]) -> None:
    """A launcher beside each entry script --distributed changed (in a --diff: its diff)."""
    texts = {name: text for name, origin in documentation.items() if (text := _documentation(origin)) is not None}
    made, rows = launchers.plan(outcome.distributed, names, texts, targets.get(options.target))
    outcome.findings += rows
    for launcher in made:
        found = launcher.command_line
        outcome.launchers.append((launcher.name, launcher.script, found.where if found else "", found.placeholders if found else ()))
        if options.diff:
            outcome.diffs.append(_unified_diff(launcher.name, b"", launcher.text.encode(), new_file=True))
        elif writer is not None:
            writer.create(launcher.name, launcher.text.encode(), executable=True)


def _documentation(origin: Path) -> str | None:
    try:
        if origin.stat().st_size > MAX_TEXT:
            return None
        return origin.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def _entry_names(sources: list[Source], entries: list[Path]) -> frozenset[str]:
    """The names in OUT of the --entry scripts; a MigrationError for one that is not a Python
    file of the input."""
    names = set()
    for entry in entries:
        try:
            resolved = entry.resolve(strict=True)
        except (OSError, RuntimeError):
            raise MigrationError(f"--entry {entry}: no such file") from None
        if not resolved.is_file() or resolved.suffix != ".py":
            raise MigrationError(f"--entry {entry}: not a Python file")
        for source in sources:
            if resolved == source.path or source.path in resolved.parents and source.path.is_dir():
                names.add((source.prefix / resolved.relative_to(source.base)).as_posix())
                break
        else:
            raise MigrationError(f"--entry {entry}: not a file of the input")
    return frozenset(names)


class Copier:
    """Copies the files that are not Python on a thread of their own, while the workers migrate
    (the copies wait on the disk, the workers on the CPU: a tree with many data files is not
    copied first and migrated after). Leaving the block waits for the copy in progress, and an
    interrupt stops the rest: only whole files are written. What the copies report is merged
    where it would have been had they been made first."""

    def __init__(self, writer: Writer | None, copies: list[tuple[Path, str]], outcome: Outcome) -> None:
        self.copies = copies if writer is not None else []
        self.own = Outcome()
        self.writer = writer.reporting_to(self.own) if writer is not None else None
        self.outcome = outcome
        self.position = len(outcome.skipped)
        self.stop = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._copy, name="torchport-copy", daemon=True)

    def _copy(self) -> None:
        try:
            for origin, name in self.copies:
                if self.stop.is_set():
                    return
                self.writer.copy(origin, name)
        except BaseException as error:  # noqa: BLE001 (raised again in the main thread)
            self.failure = error

    def __enter__(self) -> Copier:
        if self.copies:
            self.thread.start()
        return self

    def __exit__(self, kind, error, trace) -> None:
        if error is not None:
            self.stop.set()
        if self.copies:
            self.thread.join()
        self.outcome.written += self.own.written
        self.outcome.skipped[self.position : self.position] = self.own.skipped
        if self.failure is not None and error is None:
            raise self.failure


def _read(origin: Path, name: str, outcome: Outcome) -> bytes | None:
    try:
        return origin.read_bytes()
    except OSError as error:
        outcome.skipped.append((name, f"could not be read: {error.strerror or error}"))
        return None


def _record(origin: Path, job: Job, result: FileResult, outcome: Outcome, options: Options, writer: Writer | None) -> None:
    outcome.findings.extend(result.findings)
    outcome.suppressed.extend(result.suppressed)
    if from_npu.is_npu_code(job.data):
        outcome.npu_code.append(job.relative)
    if from_npu.converted(result.findings):
        outcome.npu_converted.append(job.relative)
    if result.apex:
        outcome.apex.setdefault(result.apex, []).append(job.relative)
    if result.distribution is not None:
        if result.distribution.distributed and result.distribution.entry:
            outcome.distributed.append(job.relative)  # (a trainer module, rank 0 saving only, gets no launcher)
        elif result.distribution.entry:
            outcome.left_alone.append((job.relative, result.distribution.left_alone))
    if result.error == SKIP_REASON:
        outcome.skipped_on_request.append(job.relative)
        outcome.skipped.append((job.relative, SKIP_REASON + (f", {writer.UNCHANGED}" if writer is not None else "")))
    elif result.error:
        copied = f", {writer.UNCHANGED}" if writer is not None else ""  # (analyze writes no tree)
        outcome.skipped.append((job.relative, f"not migrated{copied}: {result.error}"))
    if result.changed:
        outcome.changed.append(job.relative)
        if options.diff:
            outcome.diffs.append(_unified_diff(job.relative, job.data, result.source))
    if outcome.page is not None and (result.changed or result.findings):
        outcome.page.add(job.relative, _text(job.data), _text(result.source), result.findings)
    if writer is not None:
        writer.write(origin, job.relative, result)


def _text(source: bytes) -> str:
    """`source` decoded as Python reads it (a coding cookie, a BOM), for showing."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return source.decode("utf-8", "replace")


def _unified_diff(relative: str, old: bytes, new: bytes, new_file: bool = False) -> str:
    lines = difflib.unified_diff(
        _text(old).splitlines(keepends=True),
        _text(new).splitlines(keepends=True),
        fromfile="/dev/null" if new_file else f"a/{relative}",
        tofile=f"b/{relative}",
    )
    return "".join(lines)

