"""Rewrite CUDA training code for another target into a new tree.

SRC (a file or a folder) is never modified (unless --in-place, below): OUT receives the same layout, with .py files
migrated and every other file copied, plus reports in OUT/torchport_report/:
  change_list.csv      every change: File, Start Line, End Line, Operation Type, Message, Rule
  unsupported_api.csv  what the target lacks (File, Start Line, End Line, OP, Tips): port by hand;
                       torch APIs whose aten operator has no kernel there, too (TP027)
  unknown_api.csv      CUDA names no rule understands, left as they were, and torch names the
                       pinned torch does not have (TP026: a typo or a removed API, and its fix)
  notes.csv            left on purpose (e.g. cuDNN flags that have no effect)
  api_precision_advice.csv, api_performance_advice.csv (File, Start Line, End Line, OP, Advice)
                       lines that compute differently, or slower than they could, on the target
  affinity_api_call.csv  faster APIs the target has for what a line does (File, Start Line,
                       End Line, Api Type, Api Call Name, Affinity Api Name)
  skipped_files.csv    files copied unchanged (not valid Python, Python 2, bad encoding, over a
                       budget) or not taken (unreadable, a loop of links, a link out of SRC)
  distributed.csv      with --distributed: its rows alone (the columns of change_list.csv)
  index.html           all of it as one page: the counts, and per file a side-by-side diff
                       whose changed lines carry their rule and message (no network needed)
  summary.json         the figures below, for scripts; what the file choice left out (with
                       --distributed: which files it changed, which entry scripts it left and why);
                       "apex": the --apex mode, and the files converted to native torch, pointed at
                       the stand-in (torchport.compat.apex), or still importing apex

--apex native (the default, except on npu) rewrites NVIDIA apex code (amp.initialize, scale_loss,
the fused optimizers, apex DDP, fused norms) to torch.amp, torchport.optim and torch's, before
--distributed and the migration see the file (rows TP301-TP307, at the lines of the file as read);
a form with no confident rewrite imports the stand-in torchport.compat.apex instead (TP307).
--apex keep (npu's default: Ascend ships an apex of its own) leaves it, with a TP300 row per file;
on npu only what Ascend's apex has (amp, combine tensors, the NpuFused optimizers) is left, the rest
is rewritten as with native, and TP117 advises for Ascend's apex (combine_grad=True, NpuFused*).

--amp torch (npu's default: the guide makes AMP a required step there) adds mixed precision to each
training step that runs in float32 with no AMP of its own: torch.amp's autocast around the forward
and the loss, a GradScaler around backward and step, unscale_ before clipping, its state beside the
optimizer's in checkpoints (rows TP501-TP503; TP500 says why a step was left). --amp apex (npu) writes
Ascend's apex form instead (amp.initialize, scale_loss), as the ModelZoo ports do; --amp off adds nothing.

--from npu reads SRC as code written for the Ascend NPU (import torch_npu, .npu(), torch.npu.*,
"npu:0", hccl, the NpuFused optimizers, torch_npu.npu_* fused kernels, ASCEND_RT_VISIBLE_DEVICES)
and rewrites it into CUDA's own dialect first (rows TP4xx, at the lines of the file as read):
the kernels become their torch computation, NPU-only tuning is dropped with a row; then it is
migrated to --target as CUDA code is, with the same reports. --target cuda takes it back to
CUDA (there, CUDA code needs no change: without --from npu, migrate --target cuda copies it as
it is). A file that says nothing of the NPU is migrated as before; without --from npu, migrate
says (on stderr) when SRC looks like NPU code.

--distributed turns a single-card training script into one that runs as one process per device:
each training entry script (detected, or named by --entry) gets the process group, a
DistributedSampler on its training loaders, its model wrapped in DistributedDataParallel, and
saving and printing on rank 0 (rows TP201-TP206; TP200: what was left as it was), and a
launcher beside it in OUT, run_distributed.sh: torchrun with one process per device of the
target (NPROC_PER_NODE, NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT; see its header), with the
script's command line from SRC's shell scripts or README. Without a launcher, the script still
runs as one process, as before.

Every file is migrated in a guarded worker process: a file that crashes the parser, runs past
--file-timeout or needs over 4 GB costs only itself (it is copied unchanged and listed). Links
that stay inside SRC are made again in OUT as links; links that leave it are not followed.
Virtual environments, build/, dist/, node_modules/ and tool caches are left out, and so is
what .gitignore ignores in a git checkout (see "choosing files" below).

--in-place (or --fix) rewrites SRC itself instead: only the Python files that change, each
replaced whole (a new file beside it moved over it, its mode kept), so an error or Ctrl-C leaves
each file as it was or migrated, and nothing else in SRC is touched. -o then names the folder for
the reports (outside SRC; default: a new temporary folder, printed at the end). Preview it with
--diff. In a git checkout it refuses to run while files under SRC have uncommitted changes
(modified, staged or untracked: commit or stash them, so that `git diff` shows the migration
alone and `git checkout` undoes it) unless --allow-dirty; outside a checkout it runs, as ruff
--fix does: keep a copy.

exit status: 0 done; 1 done, but torchport met an internal error (a bug of ours: the summary
counts them, summary.json lists them; the files or steps they cost were left as they were), or
with --strict something was unsupported or not parsed, or there was no Python file in SRC to
migrate (a warning says so, as `torchport check` does);
2 usage error (nothing written); 130 interrupted (Ctrl-C or SIGTERM: only whole files written).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from collections import Counter
from pathlib import Path

from torchport import targets
from torchport.errors import UsageError
from torchport.findings import Operation
from torchport.migrate import engine, in_place
from torchport.migrate.rules import RULES
from torchport.migrate.selection import add_rule_selection_arguments, rule_selection_from
from torchport.migrate.codes import rule_names
from torchport.migrate.walk import ALWAYS_EXCLUDED, add_selection_arguments, selection_from
from torchport.migrate.workers import FILE_TIMEOUT
from torchport.distribute.modes import BATCH_MODES
from torchport.migrate.apex import KEEP as APEX_KEEP, MODES as APEX_MODES, default_mode as default_apex_mode
from torchport.mixed_precision.changes import MODES as AMP_MODES, OFF as AMP_OFF, default_mode as default_amp_mode
from torchport.mixed_precision.changes import refusal as amp_refusal
from torchport.migrate import from_npu
from torchport.migrate.distributed import Request


QUIET_EXCLUSIONS = set(ALWAYS_EXCLUDED.values())  # never user code: counted in summary.json, not printed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "src", type=Path, nargs="+", metavar="SRC",
        help="Python files or folders of code; with several, each folder goes to OUT/<its name>",
    )
    parser.add_argument(
        "-o", "--out", type=Path, metavar="OUT",
        help="folder to write into (required unless --diff or --in-place); with --in-place: the folder for the reports",
    )
    parser.add_argument(
        "-t", "--target", choices=targets.names(), default=targets.DEFAULT,
        help="where the code should run (default: %(default)s)",
    )
    parser.add_argument("--diff", action="store_true", help="print a unified diff instead of writing anything")
    parser.add_argument(
        "--in-place", "--fix", dest="in_place", action="store_true",
        help="rewrite the Python files of SRC themselves (see above; --diff previews it)",
    )
    parser.add_argument(
        "--allow-dirty", action="store_true",
        help="with --in-place: run even though git has uncommitted changes under SRC",
    )
    parser.add_argument("--force", action="store_true", help="write into a non-empty OUT (never deletes anything)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if anything is unsupported or not parsed")
    parser.add_argument(
        "-j", "--jobs", type=_jobs, default=1, metavar="N",
        help="migrate with N worker processes (0: one per CPU; default 1)",
    )
    parser.add_argument(
        "--file-timeout", type=_seconds, default=FILE_TIMEOUT, metavar="S",
        help="give up on a file after S seconds and copy it unchanged (default %(default)g)",
    )
    parser.add_argument(
        "--apply-affinity", action="store_true",
        help="also swap torch optimizers for their fused twins in torchport.optim (same arguments and "
        "state_dict); every other affinity row stays advice",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    add_source_argument(parser)
    add_apex_argument(parser)
    add_amp_argument(parser)
    add_distributed_arguments(parser)
    add_selection_arguments(parser)
    add_rule_selection_arguments(parser)


def add_source_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="source", choices=from_npu.SOURCES, default=from_npu.FROM_CUDA,
        help=f"what SRC is written for (default: %(default)s); {from_npu.FROM_NPU}: code ported to the Ascend NPU "
        "(torch_npu, .npu(), torch.npu, hccl, NpuFused optimizers, torch_npu.npu_* kernels) is rewritten into "
        "CUDA's dialect first (rows TP4xx), then migrated to --target as CUDA code is",
    )


def check_source(args: argparse.Namespace) -> None:
    """A UsageError for a --from the --target cannot take (--from npu --target npu), or an --amp."""
    refusal = from_npu.refusal(args.source, targets.get(args.target))
    refusal = refusal or amp_refusal(getattr(args, "amp", None), getattr(args, "apex", None), targets.get(args.target))
    if refusal is not None:
        raise UsageError(refusal)


def note_source(args: argparse.Namespace, command: str, outcome: engine.Outcome | None, options: engine.Options) -> None:
    """On stderr: what --target cuda does to CUDA code (nothing), and, for a tree that looks like
    NPU code read as CUDA's, the suggestion to migrate it with --from npu."""
    if args.quiet:
        return
    if targets.get(args.target).runs_cuda_code and args.source == from_npu.FROM_CUDA:
        print(f"torchport {command}: note: CUDA code runs on {args.target} as written: the rules change nothing "
              f"(--from {from_npu.FROM_NPU} converts NPU code)", file=sys.stderr)
    hint = outcome.npu_hint(options) if outcome is not None else None
    if hint:
        print(f"torchport {command}: {hint}", file=sys.stderr)


def add_apex_argument(parser: argparse.ArgumentParser) -> None:
    keeping = ", ".join(t.name for t in targets.all_targets().values() if default_apex_mode(t) == APEX_KEEP) or "none"
    parser.add_argument(
        "--apex", choices=APEX_MODES,
        help="NVIDIA apex code: native rewrites it to torch.amp, torch DDP and torchport.optim (apex builds only for "
        f"CUDA); keep leaves it for a target with an apex of its own (default: keep on {keeping}, else native)",
    )


def add_amp_argument(parser: argparse.ArgumentParser) -> None:
    adding = ", ".join(t.name for t in targets.all_targets().values() if default_amp_mode(t) != AMP_OFF) or "none"
    parser.add_argument(
        "--amp", choices=AMP_MODES,
        help="mixed precision for training steps that run in float32 (a backward and an optimizer step, no autocast, "
        "scaler, half precision, apex, accelerate or DeepSpeed of their own): torch adds torch.amp's autocast around "
        "the forward and a GradScaler around backward and step (unscale_ before clipping, its state in checkpoints); "
        "apex (npu) adds Ascend's apex amp.initialize and scale_loss, as the ModelZoo ports do; off adds nothing "
        f"(default: torch on {adding}, whose matrix units compute in float16; off elsewhere)",
    )


def add_distributed_arguments(parser: argparse.ArgumentParser, analysis: bool = False) -> None:
    what = "report what it would take to run" if analysis else "make"
    group = parser.add_argument_group("multi-card")
    group.add_argument(
        "--distributed", action="store_true",
        help=f"{what} each training entry script run as one process per device (DDP, "
        "DistributedSampler, rank 0 saves)" + ("" if analysis else ", with a launcher beside it: run_distributed.sh"),
    )
    group.add_argument(
        "--distributed-batch", choices=BATCH_MODES, metavar="{global,per-rank}",
        help="global (default): each process takes batch / WORLD_SIZE, so N cards train as one did; "
        "per-rank: each keeps the whole batch and the learning rate is multiplied by WORLD_SIZE",
    )
    group.add_argument(
        "--entry", action="append", type=Path, default=[], metavar="FILE",
        help="a training entry script (repeatable; default: each file that runs as a program and trains)",
    )


def distributed_request(args: argparse.Namespace) -> Request | None:
    """What --distributed asks for; a UsageError for its options without it."""
    if not args.distributed:
        given = "--distributed-batch" if args.distributed_batch else "--entry" if args.entry else None
        if given:
            raise UsageError(f"{given} goes with --distributed")
        return None
    return Request(batch=args.distributed_batch or "global")


def _jobs(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes (0 or more)")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def check_options(args: argparse.Namespace) -> None:
    """A UsageError for options that cannot go together (before anything is read or written)."""
    if args.diff and args.out is not None:
        raise UsageError("--diff writes nothing: drop -o OUT, or drop --diff to write into OUT")
    if args.diff and args.in_place:
        raise UsageError("--diff previews what --in-place would write: give one of them")
    if args.allow_dirty and not args.in_place:
        raise UsageError("--allow-dirty goes with --in-place")
    check_source(args)


def main(args: argparse.Namespace) -> int:
    check_options(args)
    if args.in_place and not args.allow_dirty:
        in_place.refuse_dirty(args.src)
    reports = in_place.temporary_reports() if args.in_place and args.out is None else None
    try:
        return _migrate(args, reports or args.out)
    finally:
        if reports is not None and not (reports / engine.REPORT_DIR / "summary.json").exists():
            shutil.rmtree(reports, ignore_errors=True)  # (ours, and no report was written into it)


def _migrate(args: argparse.Namespace, out: Path | None) -> int:
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    rules = rule_selection_from(args)
    options = engine.Options(
        sources=args.src, out=out, target=args.target, force=args.force, diff=args.diff, jobs=jobs,
        progress=not args.quiet, selection=selection_from(args),
        file_timeout=args.file_timeout, apply_affinity=args.apply_affinity,
        distribute=distributed_request(args), entries=args.entry, apex=args.apex, in_place=args.in_place,
        select=rules.select, ignore=rules.ignore, source=args.source, amp=args.amp,
    )
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        outcome = engine.run(options)
    except engine.MigrationError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a second Ctrl-C while we say so changes nothing)
        if args.in_place:
            written = ": each file of SRC is as it was or migrated, whole; no reports"
        else:
            written = "" if args.diff or out is None else f": {out} holds only whole files, and no reports"
        print(f"torchport migrate: interrupted{written}", file=sys.stderr)
        signal.signal(signal.SIGINT, before)  # (a caller in this process, a test, keeps its Ctrl-C)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.diff:
        sys.stdout.write("".join(outcome.diffs))
    if not args.quiet:
        print_summary(outcome, options, file=sys.stderr if args.diff else sys.stdout)
    note_source(args, "migrate", outcome, options)
    empty = warn_of_no_python(args, outcome)
    troubled = outcome.count(Operation.UNSUPPORTED) or len(outcome.skipped) > len(outcome.skipped_on_request)
    return 1 if empty or outcome.internal_errors() or (args.strict and troubled) else 0


def warn_of_no_python(args: argparse.Namespace, outcome: engine.Outcome) -> bool:
    """Say so (on stderr) of each SRC file that is not Python, and of a run that had no Python
    file to migrate; True for the latter (exit 1: nothing was migrated)."""
    left = "left as it was" if args.in_place else "not migrated" if args.diff else "copied as it was"
    for path in args.src:
        if path.is_file() and path.suffix != ".py":
            print(f"torchport migrate: warning: {path} is not a Python file (.py): {left}", file=sys.stderr)
    if outcome.python_files:
        return False
    given = " ".join(str(path) for path in args.src)
    print(f"torchport migrate: warning: no Python files in {given}: nothing to migrate", file=sys.stderr)
    return True


def print_internal_errors(outcome: engine.Outcome, file) -> None:
    """Loud, since they are ours: how many internal errors, the first few, and where to report them."""
    errors = outcome.internal_errors()
    if not errors:
        return
    print(f"  internal errors {len(errors)}: bugs in torchport, each left its file (or step) as it was; "
          "please report them with the lines they name (exit status 1)", file=file)
    for path, reason in errors[:5]:
        print(f"    {path}: {reason}", file=file)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def print_summary(outcome: engine.Outcome, options: engine.Options, file) -> None:
    others = outcome.files - outcome.python_files
    if options.in_place:
        print(
            f"torchport migrate [{options.target}]: {outcome.python_files} Python files, "
            f"{outcome.written} rewritten in place, {others} other files left as they were",
            file=file,
        )
    elif options.diff or not options.out:
        print(
            f"torchport migrate [{options.target}]: {outcome.python_files} Python files, "
            f"{len(outcome.changed)} would change, {others} other files; nothing written (--diff)",
            file=file,
        )
    else:
        links = f", {outcome.links} links" if outcome.links else ""
        print(
            f"torchport migrate [{options.target}]: {outcome.python_files} Python files, "
            f"{len(outcome.changed)} changed, {others} other files copied{links} -> {options.out}",
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
    print(
        f"  advice: precision {outcome.count(Operation.PRECISION)}, performance {outcome.count(Operation.PERFORMANCE)}, "
        f"affinity {outcome.count(Operation.AFFINITY)}",
        file=file,
    )
    print_internal_errors(outcome, file)
    print_suppressed(outcome, file)
    reasons = Counter(reason for _, reason in outcome.excluded if reason not in QUIET_EXCLUSIONS)
    if reasons:
        said = ", ".join(f"{count} {reason}" for reason, count in reasons.most_common(5))
        print(f"  left out {sum(reasons.values())} (listed in summary.json): {said}", file=file)
    for path, reason in outcome.skipped[:10]:
        print(f"  skipped {path}: {reason}", file=file)
    if len(outcome.skipped) > 10:
        print(f"  ... and {len(outcome.skipped) - 10} more in skipped_files.csv", file=file)
    print_apex(outcome, options, file)
    if options.distribute is not None:
        print_distributed(outcome, options, file)
    if options.out and not options.diff:
        print(f"  reports: {options.out / engine.REPORT_DIR}/", file=file)


def print_suppressed(outcome: engine.Outcome, file) -> None:
    """One line for what suppression comments kept as written (none where nothing was)."""
    if not outcome.suppressed and not outcome.skipped_on_request:
        return
    by_rule = Counter(f.code for f in outcome.suppressed)
    said = ", ".join(f"{code} {count}" for code, count in sorted(by_rule.items()))
    print(f"  suppressed {len(outcome.suppressed)}" + (f" ({said})" if said else "")
          + f", files skipped on request {len(outcome.skipped_on_request)}", file=file)


def print_apex(outcome: engine.Outcome, options: engine.Options, file) -> None:
    """One line for what --apex made of the files that use apex (none where no file does)."""
    if not outcome.apex:
        return
    ways = {way: len(files) for way, files in outcome.apex.items()}
    print(f"  apex ({options.choices().apex_mode}): {ways.get('native', 0)} files converted to native torch, "
          f"{ways.get('compat', 0)} on the stand-in torchport.compat.apex, {ways.get('kept', 0)} still importing apex",
          file=file)


def print_distributed(outcome: engine.Outcome, options: engine.Options, file) -> None:
    """What --distributed did: the files it changed, the launchers, the entry scripts it left."""
    wrote = "would write" if options.diff or options.analysis_only or not options.out else "wrote"
    print(f"  distributed {len(outcome.distributed)} files (batch: {options.distribute.batch})"
          + (f": {', '.join(outcome.distributed[:5])}" if outcome.distributed else ""), file=file)
    if len(outcome.distributed) > 5:
        print(f"    ... and {len(outcome.distributed) - 5} more in summary.json", file=file)
    base = f"{options.out}/" if options.out and not (options.diff or options.analysis_only or options.in_place) else ""
    for name, script, where, placeholders in outcome.launchers:
        said = f"command line from {where}" if where else "no command line found: add its arguments"
        if placeholders:
            said += f"; fill in {' '.join(placeholders)}"
        print(f"  launcher: {wrote} {base}{name} for {script} ({said})", file=file)
    for name, reason in outcome.left_alone[:10]:
        print(f"  left alone {name}: {reason}", file=file)
    if len(outcome.left_alone) > 10:
        print(f"    ... and {len(outcome.left_alone) - 10} more in summary.json", file=file)
    if not outcome.distributed and not outcome.left_alone:
        print("  no training entry script found: name yours with --entry FILE", file=file)
