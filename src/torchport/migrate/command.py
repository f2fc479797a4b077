"""Rewrite CUDA training code for another target into a new tree.

SRC (a file or a folder) is never modified: OUT receives the same layout, with .py files
migrated and every other file copied, plus reports in OUT/torchport_report/:
  change_list.csv      every change: File, Start Line, End Line, Operation Type, Message, Rule
  unsupported_api.csv  what the target lacks (File, Start Line, End Line, OP, Tips): port by hand
  unknown_api.csv      CUDA names no rule understands, left as they were
  notes.csv            left on purpose (e.g. cuDNN flags that have no effect)
  skipped_files.csv    files copied unchanged (syntax errors, Python 2, bad encoding) or not followed
  summary.json         the figures below, for scripts

exit status: 0 done; 1 done, but with --strict something was unsupported or not parsed; 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from torchport import targets
from torchport.errors import UsageError
from torchport.findings import Operation
from torchport.migrate import engine
from torchport.migrate.rules import RULES
from torchport.migrate.source import IMPORT_CODE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", type=Path, metavar="SRC", help="a Python file or a folder of code")
    parser.add_argument("-o", "--out", type=Path, metavar="OUT", help="folder to write into (required unless --diff)")
    parser.add_argument(
        "-t", "--target", choices=targets.names(), default="npu",
        help="where the code should run (default: %(default)s)",
    )
    parser.add_argument("--diff", action="store_true", help="print a unified diff instead of writing anything")
    parser.add_argument("--force", action="store_true", help="write into a non-empty OUT (never deletes anything)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if anything is unsupported or not parsed")
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N",
        help="migrate with N processes (0: one per CPU; default 1)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")


def main(args: argparse.Namespace) -> int:
    from torchport.report.tables import write_reports

    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    options = engine.Options(
        src=args.src, out=args.out, target=args.target, force=args.force, diff=args.diff, jobs=jobs,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    try:
        outcome = engine.run(options)
    except engine.MigrationError as error:
        raise UsageError(str(error)) from None
    summary = outcome.summary(options)
    if args.diff:
        sys.stdout.write("".join(outcome.diffs))
    else:
        write_reports(options.out / engine.REPORT_DIR, outcome.findings, outcome.skipped, summary)
    if not args.quiet:
        print_summary(outcome, options, file=sys.stderr if args.diff else sys.stdout)
    troubled = outcome.count(Operation.UNSUPPORTED) or outcome.skipped
    return 1 if args.strict and troubled else 0


def rule_names() -> dict[str, str]:
    names = {rule.code: rule.title for rule in RULES}
    names[IMPORT_CODE] = "imports the migrated code needs"
    return names


def print_summary(outcome: engine.Outcome, options: engine.Options, file) -> None:
    where = f" -> {options.out}" if options.out and not options.diff else ""
    print(
        f"torchport migrate [{options.target}]: {outcome.python_files} Python files, "
        f"{len(outcome.changed)} changed, {outcome.files - outcome.python_files} other files copied{where}",
        file=file,
    )
    names = rule_names()
    for code, count in outcome.changes_by_rule().items():
        print(f"  {code} {count:>5}  {names.get(code, '')}", file=file)
    print(
        f"  unsupported {outcome.count(Operation.UNSUPPORTED)}, unknown {outcome.count(Operation.UNKNOWN)}, "
        f"notes {outcome.count(Operation.NOTE)}, skipped files {len(outcome.skipped)}",
        file=file,
    )
    for path, reason in outcome.skipped[:10]:
        print(f"  skipped {path}: {reason}", file=file)
    if len(outcome.skipped) > 10:
        print(f"  ... and {len(outcome.skipped) - 10} more in skipped_files.csv", file=file)
    if options.out and not options.diff:
        print(f"  reports: {options.out / engine.REPORT_DIR}/", file=file)
