"""Analyse CUDA training code for a target, before (or instead of) migrating it. Nothing is rewritten.

Reports land in OUT/torchport_report/, in the columns Ascend's PyTorch Analyse tool writes:
  --mode apis        index.html: the findings as a page, with what migrate would change;
                     unsupported_api.csv, unknown_api.csv (File, Start Line, End Line, OP, Tips):
                     unsupported: what the target lacks, torch.cuda APIs and torch APIs whose
                     aten operator has no kernel there (from the kernel data `ops check` reads;
                     an API of several operators, or kernels the data does not list, say
                     nothing), with what happens instead; unknown: CUDA names no rule knows, and
                     torch names that do not exist in the pinned torch (a typo or a removed API),
                     with the nearest name that does or the replacement;
                     api_precision_advice.csv, api_performance_advice.csv (File, Start Line,
                     End Line, OP, Advice): lines that compute differently, or slower than they
                     could, on the target (no AMP where the chip needs it, float64 on MPS,
                     DataParallel, mp.spawn, DDP buffers, copies in loops, launch switches)
  --mode affinity    affinity_api_call.csv (File, Start Line, End Line, Api Type, Api Call Name,
                     Affinity Api Name): faster APIs the target has (fused optimizers, fused
                     clipping, scaled_dot_product_attention, the NPU's fused ops)
  --mode third-party full_unsupported_results.csv (File, 3rd-party API, Message): where the
                     libraries SRC imports (or --package NAME) hard-code CUDA, which neither
                     migrate nor run can reach; not_scanned.csv (File, Start Line, Import, What,
                     Action), without --package: what SRC imports that could not be scanned
                     (not installed: the distribution to install; CUDA extensions, to port)
  --mode dynamic-shape  OUT holds a copy of SRC whose training loops record shapes per step;
                     run it, and it writes dynamic_shape_report.csv (see `torchport shapes`)
  --mode all         apis, affinity and third-party
  apex               with apis: apex_api.csv (File, Start Line, End Line, OP, Tips), where the code
                     uses NVIDIA apex: each use, and what it becomes on the target (kept for
                     Ascend's apex on npu, its native torch form, or the stand-in package;
                     --apex chooses as for migrate)
  --distributed      also distributed.csv (File, Start Line, End Line, Operation Type, Message,
                     Rule): what `migrate --distributed` would change in each training entry
                     script (TP201-TP206), and what it would leave and why (TP200)
Every row names the line it is about; there are no rows "for every file". `torchport migrate`
writes the apis and affinity reports too.

exit status: 0 done; 2 usage error (nothing written); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from torchport import targets
from torchport.errors import UsageError
from torchport.findings import Finding, Operation
from torchport.migrate import engine
from torchport.migrate.source import FileResult
from torchport.migrate.walk import add_selection_arguments, scan, selection_from
from torchport.migrate.selection import add_rule_selection_arguments, rule_selection_from
from torchport.distribute.changes import CODES as DISTRIBUTE_CODES
from torchport.migrate.command import (add_amp_argument, add_apex_argument, add_distributed_arguments, add_source_argument, check_source,
                                       distributed_request, note_source, print_distributed)
from torchport.report.csv_table import write_table
from torchport.report.html import HTML_REPORT
from torchport.report.tables import (
    ADVICE_REPORTS,
    AFFINITY_REPORT,
    API_COLUMNS,
    DISTRIBUTED_REPORT,
    NOT_SCANNED_COLUMNS,
    NOT_SCANNED_REPORT,
)

MODES = ("apis", "affinity", "third-party", "dynamic-shape", "all")
REPORTS = {
    "apis": {"unsupported_api.csv", "unknown_api.csv", "skipped_files.csv", HTML_REPORT, *ADVICE_REPORTS},
    "affinity": {AFFINITY_REPORT, "skipped_files.csv"},
}
THIRD_PARTY_REPORT = "full_unsupported_results.csv"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", type=Path, nargs="+", metavar="SRC", help="Python files or folders of code")
    parser.add_argument("-o", "--out", type=Path, required=True, metavar="OUT",
                        help="folder for the reports (OUT/torchport_report/)")
    parser.add_argument("-t", "--target", choices=targets.names(), default=targets.DEFAULT,
                        help="the target to analyse for (default: %(default)s)")
    parser.add_argument("-m", "--mode", choices=MODES, default="all", help="what to analyse (default: %(default)s)")
    parser.add_argument("--package", action="append", default=[], metavar="NAME",
                        help="third-party: scan this installed package (repeatable; default: what SRC imports)")
    parser.add_argument("--force", action="store_true", help="write into a non-empty OUT (never deletes anything)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (0: one per CPU)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    add_source_argument(parser)
    add_apex_argument(parser)
    add_amp_argument(parser)
    add_distributed_arguments(parser, analysis=True)
    add_selection_arguments(parser)
    add_rule_selection_arguments(parser)


def main(args: argparse.Namespace) -> int:
    if args.jobs < 0:
        raise UsageError(f"-j {args.jobs}: give a number of processes, 0 or more")
    check_source(args)
    if args.mode == "dynamic-shape":
        return _dynamic_shape(args)
    wanted = set()
    for mode in ("apis", "affinity") if args.mode == "all" else (args.mode,):
        wanted |= REPORTS.get(mode, set())
    request = distributed_request(args)
    if request is not None:
        wanted.add(DISTRIBUTED_REPORT)
    rules = rule_selection_from(args)
    options = engine.Options(
        sources=args.src, out=args.out, target=args.target, force=args.force, jobs=args.jobs or (os.cpu_count() or 1),
        selection=selection_from(args), analysis_only=True, reports=wanted, distribute=request, entries=args.entry,
        progress=not args.quiet,
        apex=args.apex, select=rules.select, ignore=rules.ignore, source=args.source, amp=args.amp,
    )
    try:
        outcome = engine.run(options) if wanted else None
        apex_uses = _apex(options, outcome) if outcome is not None and args.mode in ("apis", "all") else []
        if args.mode in ("third-party", "all"):
            third_party, unscanned = _third_party(args, options)
        else:
            third_party = unscanned = None
    except engine.MigrationError as error:
        raise UsageError(str(error)) from None
    if not args.quiet:
        _print_summary(args, outcome, third_party)
        _print_not_scanned(unscanned)
        _print_apex(apex_uses)
        if outcome is not None and request is not None:
            _print_distributed(outcome, options)
    note_source(args, "analyze", outcome, options)
    return 0


def _print_distributed(outcome: engine.Outcome, options: engine.Options) -> None:
    """What --distributed would change (distributed.csv), and what migrate would write."""
    rows = [f for f in outcome.findings if f.code in DISTRIBUTE_CODES]
    print(f"  distributed rows   {len(rows):>5}  ({DISTRIBUTED_REPORT})")
    for finding in rows[:8]:
        print(f"      {finding.file}:{finding.start_line}  {finding.code} {finding.message}")
    if len(rows) > 8:
        print(f"      ... {len(rows) - 8} more in the CSV")
    print_distributed(outcome, options, sys.stdout)


def _apex(options: engine.Options, outcome: engine.Outcome) -> list[Finding]:
    """apex_api.csv, where the code uses apex: each use and what it becomes on the target."""
    from torchport.analyze.apex import APEX_REPORT, apex_rows

    rows = apex_rows(options, outcome, targets.get(options.target))
    if rows:
        write_table(options.out / engine.REPORT_DIR / APEX_REPORT, API_COLUMNS,
                    ([f.file, f.start_line, f.end_line, f.api, f.message] for f in rows))
    return rows


def _print_apex(rows: list[Finding]) -> None:
    if not rows:
        return
    from torchport.analyze.apex import APEX_REPORT

    print(f"  apex uses{len(rows):>15}  ({APEX_REPORT})")
    for finding in rows[:5]:
        print(f"      {finding.file}:{finding.start_line}  {finding.api}: {finding.message}")
    if len(rows) > 5:
        print(f"      ... {len(rows) - 5} more in the CSV")


def _third_party(args: argparse.Namespace, options: engine.Options) -> tuple[list, list | None]:
    """Scan the libraries SRC imports (or --package), and write full_unsupported_results.csv;
    without --package, also what SRC imports that could not be scanned (not_scanned.csv)."""
    from torchport.analyze import third_party

    roots = [(third_party.locate_package(name), name) for name in args.package]
    unscanned = None
    if not args.package:
        for source in args.src:
            roots += [(path, path.name) for path in third_party.imported_folders(source)]
        unscanned = _not_scanned(options)
    findings = []
    seen = set()
    for root, label in roots:
        if root in seen:
            continue
        seen.add(root)
        findings += third_party.scan_library(root, label.removesuffix(".py"))
    report = args.out / engine.REPORT_DIR
    if not report.is_dir():  # (third-party alone: nothing has claimed OUT yet)
        with engine.claimed(args.out.resolve(), options):
            _write_third_party(report, findings, unscanned)
    else:
        _write_third_party(report, findings, unscanned)
    return findings, unscanned


def _not_scanned(options: engine.Options) -> list:
    """What each SRC imports that could not be scanned, read from the files the other reports read."""
    from torchport.analyze.third_party.unscanned import not_scanned

    sources, _ = engine.check_paths(options)
    rows = []
    for source in sources:
        rows += not_scanned(source.path, source.prefix, scan(source.path, options.selection).files)
    return rows


def _write_third_party(report: Path, findings: list, unscanned: list | None) -> None:
    from torchport.analyze import third_party
    from torchport.analyze.third_party.unscanned import write_not_scanned_csv

    third_party.write_third_party_csv(report / THIRD_PARTY_REPORT, findings)
    if unscanned is not None:
        write_not_scanned_csv(report / NOT_SCANNED_REPORT, NOT_SCANNED_COLUMNS, unscanned)


def _dynamic_shape(args: argparse.Namespace) -> int:
    """A copy of SRC whose training loops record shapes (as Ascend's dynamic_shape mode writes)."""
    from torchport.shapes.loops import instrument_source  # (the run-time detector's package)

    options = engine.Options(sources=args.src, out=args.out, target=args.target, force=args.force,
                             selection=selection_from(args))
    try:
        sources, out = engine.check_paths(options)
        with engine.claimed(out, options):
            instrumented, skipped = _copy_instrumented(sources, out, options, instrument_source)
    except engine.MigrationError as error:
        raise UsageError(str(error)) from None
    if not args.quiet:
        print(f"torchport analyze [dynamic-shape]: {len(instrumented)} files with a training loop instrumented -> {args.out}")
        for name, reason in skipped:
            print(f"  {name}: copied as it is, {reason}")
        print("  run the copy as you run the original; it writes dynamic_shape_report.csv")
        if not instrumented:
            print("  no training loop found: wrap yours by hand as `for batch in DETECTOR.start(loader):`"
                  " (from torchport.shapes import DETECTOR)")
    return 0


def _copy_instrumented(sources, out: Path, options: engine.Options, instrument) -> tuple[list[str], list[tuple[str, str]]]:
    """Copy every file taken from the sources into OUT, with training loops instrumented; the
    names of the files that were, and (name, why) for each Python file copied as it is though it
    may train: it does not parse, or it trains in no loop that could be wrapped."""
    writer = engine.Writer([s.path for s in sources], out, engine.Outcome())
    instrumented, skipped = [], []
    for source in sources:
        tree = scan(source.path, options.selection)
        for relative, text in tree.links:  # (a link is copied as a link, as migrate does)
            writer.link((source.prefix / relative).as_posix(), text)
        for relative in tree.files:
            name = (source.prefix / relative).as_posix()
            origin = source.base / relative
            new = None
            if relative.suffix == ".py":
                new, why = _instrumented(origin, name, instrument)
                if why:
                    skipped.append((name, why))
            if new is None:
                writer.copy(origin, name)
            else:
                wrapped = Finding(name, 0, 0, "TS001", Operation.MODIFY, "training loop wrapped in DETECTOR.start()")
                writer.write(origin, name, FileResult(new, findings=[wrapped]))
                instrumented.append(name)
    return instrumented, skipped


def _instrumented(origin: Path, name: str, instrument) -> tuple[bytes | None, str | None]:
    """(the file with its training loops wrapped, else None; why none was, where it may train)."""
    from torchport.shapes.loops import why_no_training_loop

    try:
        source = origin.read_bytes()
        new = instrument(source, name)
        return new, None if new is not None else why_no_training_loop(source, name)
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    except SyntaxError as error:
        return None, f"it does not parse (line {error.lineno}: {error.msg})"
    except ValueError as error:  # (null bytes: not Python)
        return None, f"it is not Python text ({error})"


def _print_summary(args: argparse.Namespace, outcome: engine.Outcome | None, third_party: list | None) -> None:
    out = sys.stdout
    print(f"torchport analyze [{args.target}, {args.mode}] -> {args.out / engine.REPORT_DIR}/", file=out)
    if outcome is not None:
        print(f"  {outcome.python_files} Python files", file=out)
        rows = []
        if args.mode in ("apis", "all"):
            rows += [("unsupported", Operation.UNSUPPORTED), ("unknown", Operation.UNKNOWN),
                     ("precision advice", Operation.PRECISION), ("performance advice", Operation.PERFORMANCE)]
        if args.mode in ("affinity", "all"):
            rows.append(("affinity", Operation.AFFINITY))
        for label, operation in rows:
            findings = [f for f in outcome.findings if f.operation is operation]
            print(f"  {label:<19}{len(findings):>5}", file=out)
            for finding in findings[:5]:
                what = finding.replacement or finding.message
                print(f"      {finding.file}:{finding.start_line}  {finding.api}: {what}", file=out)
            if len(findings) > 5:
                print(f"      ... {len(findings) - 5} more in the CSV", file=out)
        if outcome.skipped:
            print(f"  skipped files {len(outcome.skipped)} (skipped_files.csv)", file=out)
    if third_party is not None:
        print(f"  third-party{len(third_party):>13}  ({THIRD_PARTY_REPORT})", file=out)


def _print_not_scanned(rows: list | None) -> None:
    """What the third-party count leaves out: each module once, at its first line."""
    if rows is None:
        return
    from torchport.analyze.third_party.unscanned import brief, firsts, summary

    modules = firsts(rows)
    said = f"  ({NOT_SCANNED_REPORT}): {summary(rows)}" if rows else ""
    print(f"  not scanned{len(modules):>13}{said}")
    for row in modules[:8]:
        print(f"      {row.file}:{row.line}  {row.module}: {brief(row)}")
    if len(modules) > 8:
        print(f"      ... {len(modules) - 8} more in the CSV")
