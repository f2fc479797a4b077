"""List what a migration would change, or cannot port, as a linter does; write nothing.

Each finding is printed as `path:line:col: TPnnn message` (ruff's format), sorted by path and
line, then a summary line. The findings are migrate's own rows (the same engine and rules,
analysis only): every change `migrate --diff` would make, and every API the target lacks. The
column is where the line's code begins (torchport tracks lines). `--diff` prints the patch
instead, the one `migrate --diff` prints.

Suppress a finding with `# noqa: TP003` (or `# torchport: ignore[TP003]`, or a bare `# noqa`)
on its line, or on the first or last line of its statement; `# torchport: skip-file` on a line
of its own leaves the whole file alone. Suppressed findings are counted in the summary.

exit status: 0 nothing to change; 1 findings, files that could not be read as Python, or no
Python files at all; 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from torchport import targets
from torchport.check import formats
from torchport.check.formats import Row
from torchport.errors import UsageError
from torchport.findings import Finding, Operation
from torchport.migrate import engine
from torchport.migrate.codes import rule_names
from torchport.migrate.command import add_amp_argument, add_apex_argument, add_source_argument, check_source, note_source
from torchport.migrate.selection import add_rule_selection_arguments, rule_selection_from
from torchport.migrate.walk import add_selection_arguments, selection_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", type=Path, nargs="+", metavar="SRC", help="Python files or folders of code")
    parser.add_argument(
        "-t", "--target", choices=targets.names(), default=targets.DEFAULT,
        help="where the code should run (default: %(default)s)",
    )
    parser.add_argument("--diff", action="store_true", help="print the patch a migration would make (as migrate --diff)")
    parser.add_argument(
        "--output-format", choices=formats.FORMATS, default="text",
        help="text (path:line:col: CODE message), json, sarif (2.1.0) or github (workflow annotations); default: text",
    )
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (0: one per CPU)")
    parser.add_argument("--apply-affinity", action="store_true", help="count the fused-optimizer swaps as changes too")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_source_argument(parser)
    add_apex_argument(parser)
    add_amp_argument(parser)
    add_selection_arguments(parser)
    add_rule_selection_arguments(parser)


def main(args: argparse.Namespace) -> int:
    if args.jobs < 0:
        raise UsageError(f"-j {args.jobs}: give a number of processes, 0 or more")
    if args.diff and args.output_format != "text":
        raise UsageError("--diff prints a patch: it takes no --output-format")
    check_source(args)
    rules = rule_selection_from(args)
    options = engine.Options(
        sources=args.src, out=None, target=args.target, diff=True, jobs=args.jobs or (os.cpu_count() or 1),
        selection=selection_from(args), apply_affinity=args.apply_affinity, apex=args.apex,
        select=rules.select, ignore=rules.ignore, source=args.source, amp=args.amp,
    )
    try:
        runs = [(engine.run(part), displayed(part)) for part in apart(options)]  # (a --diff: nothing is written)
    except engine.MigrationError as error:
        raise UsageError(str(error)) from None
    outcome = merged([run for run, _ in runs])
    if outcome.python_files == 0:
        print(f"torchport check: warning: no Python files in {' '.join(map(str, args.src))}", file=sys.stderr)
        return 1
    note_source(args, "check", outcome, options)  # (NPU code read as CUDA's: the hint to check it --from npu)
    columns = Columns()
    rows = sorted((row_of(f, where, columns) for run, where in runs for f in reported(run.findings)),
                  key=lambda r: (r.path, r.line, r.column, r.code, r.message))
    unread = [(where(name), reason) for run, where in runs for name, reason in run.skipped
              if name not in run.skipped_on_request]
    for path, reason in unread:
        print(f"torchport check: warning: {path}: {reason}", file=sys.stderr)
    summary = summarize(outcome, options, rows, unread)
    _print(args, outcome, rows, summary)
    return 1 if rows or unread else 0


def apart(options: engine.Options) -> list[engine.Options]:
    """The run split so that no two of its SRC would take one name in migrate's tree (pre-commit
    passes `a/utils.py b/utils.py`): a run for each set of distinct names, usually one."""
    groups: list[tuple[set[str], list[Path]]] = []
    seen = set()
    for path in options.sources:
        resolved = path.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        group = next((g for g in groups if resolved.name not in g[0]), None)
        if group is None:
            groups.append(group := (set(), []))
        group[0].add(resolved.name)
        group[1].append(path)
    return [replace(options, sources=paths) for _, paths in groups]


def merged(outcomes: list[engine.Outcome]) -> engine.Outcome:
    """What the runs found, together (the figures the summary reads, and the patches)."""
    whole = engine.Outcome()
    for outcome in outcomes:
        whole.python_files += outcome.python_files
        whole.suppressed += outcome.suppressed
        whole.skipped_on_request += outcome.skipped_on_request
        whole.diffs += outcome.diffs
        whole.npu_code += outcome.npu_code
    return whole


def reported(findings: list[Finding]) -> list[Finding]:
    """The rows check lists: every change, and every API the target lacks."""
    return [f for f in findings if f.operation.is_change or f.operation is Operation.UNSUPPORTED]


def _print(args: argparse.Namespace, outcome: engine.Outcome, rows: list[Row], summary: dict) -> None:
    out = sys.stdout
    if args.diff:
        out.write("".join(outcome.diffs))
    elif args.output_format == "text":
        out.write(formats.text(rows))
    elif args.output_format == "json":
        out.write(formats.as_json(rows, summary))
    elif args.output_format == "sarif":
        out.write(formats.sarif(rows, rule_names()))
    else:
        out.write(formats.github(rows))
    if not args.quiet:
        plain = args.output_format == "text" and not args.diff
        print(summary_line(summary), file=out if plain else sys.stderr)


def summarize(outcome: engine.Outcome, options: engine.Options, rows: list[Row], unread: list) -> dict:
    unsupported = sum(1 for r in rows if r.unsupported)
    return {
        "target": options.target,
        "python_files": outcome.python_files,
        "files_with_findings": len({r.path for r in rows}),
        "findings": len(rows),
        "changes": len(rows) - unsupported,
        "unsupported": unsupported,
        "suppressed": len(outcome.suppressed),
        "skipped_on_request": len(outcome.skipped_on_request),
        "not_checked": [{"file": name, "reason": reason} for name, reason in unread],
    }


def summary_line(summary: dict) -> str:
    head = f"torchport check [{summary['target']}]: "
    if summary["findings"]:
        head += (f"{summary['findings']} findings in {summary['files_with_findings']} of {summary['python_files']} "
                 f"Python files ({summary['changes']} to change, {summary['unsupported']} unsupported)")
    else:
        head += f"{summary['python_files']} Python files, nothing to change"
    extra = [f"{summary['suppressed']} suppressed"] if summary["suppressed"] else []
    if summary["skipped_on_request"]:
        extra.append(f"{summary['skipped_on_request']} files skipped (# torchport: skip-file)")
    if summary["not_checked"]:
        extra.append(f"{len(summary['not_checked'])} files not checked")
    return head + "".join(f", {e}" for e in extra)


def row_of(finding: Finding, where, columns: Columns) -> Row:
    path = where(finding.file)
    line = max(finding.start_line, 1)  # (a row about the file as a whole: its first line)
    return Row(path, line, columns.of(path, line), max(finding.end_line, line), finding.code, finding.message, finding.operation)


class Columns:
    """Where the code of a line begins (1-based), read from the file (each file once)."""

    def __init__(self) -> None:
        self.files: dict[str, list[bytes]] = {}

    def of(self, path: str, line: int) -> int:
        if path not in self.files:
            try:
                self.files[path] = Path(path).read_bytes().splitlines()
            except OSError:
                self.files[path] = []
        lines = self.files[path]
        if not 0 < line <= len(lines):
            return 1
        text = lines[line - 1]
        return len(text) - len(text.lstrip(b" \t")) + 1


def displayed(options: engine.Options):
    """A function from a file's name in migrate's tree to the path it was read from, as the user
    spelled SRC (`examples/train.py`, not the name below the folder)."""
    sources, _ = engine.check_paths(options)
    several = len(sources) > 1
    files = {source.path.name: given for given, source in zip(options.sources, sources) if source.path.is_file()}
    folders = [("", given) if not several else (f"{source.prefix.as_posix()}/", given)
               for given, source in zip(options.sources, sources) if source.path.is_dir()]

    def where(name: str) -> str:
        if name in files:
            return files[name].as_posix()
        for prefix, folder in folders:
            if name.startswith(prefix):
                return (folder / name[len(prefix):]).as_posix()
        return name

    return where
