"""Find the aten operators a training run uses that a target has no kernel for.

  extract PROFILE    read ops from profiler output: the table key_averages().table() prints (in
                     a log, among other output) or an export_chrome_trace JSON (.json or .json.gz)
  capture SCRIPT     run SCRIPT (with its arguments) here, recording every aten op it runs
  check OPS.json     a verdict per op on a target, from the kernel lists of the real wheels
                     (torch 2.13.0's native_functions.yaml, torch_npu 2.14.0's NPU op yaml)

ops.json lists each op with its call count, input shapes and element types (schema
"torchport-ops/1"), and where known the op each call was made inside. Verdicts: missing,
dtype (float64 on MPS), partial (some overloads), unknown, internal (called only inside ops the
target runs with kernels of its own, so never there), ok.
With --target accelerator an op needs a kernel on every backend (CUDA, NPU, XPU, MPS, CPU).

examples:
  torchport ops extract train.log -o ops.json            the profiler table printed in a log
  torchport ops extract trace.json -o ops.json           a chrome trace
  torchport ops capture --steps 3 train.py --epochs 1    record 3 optimizer steps of train.py
  torchport ops check ops.json --target mps --csv mps.csv

Output files (-o, --csv) are checked before anything runs: their folder is made if missing, when
the folder above it exists; a path that cannot be written is an error at once (status 2).

exit status: 0 done; 1 the captured script failed (what it ran is still written), or with
--strict some op is missing, partial or of a dtype the target lacks; 2 bad input (one line);
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torchport import targets
from torchport.errors import UsageError
from torchport.ops import kernels, opset, report
from torchport.ops.check import check
from torchport.report.destination import RULE, output_file


EXTRACT = """\
Read the aten ops of a profiler run from PROFILE, and write them to ops.json:
  - a log with the table that prof.key_averages(group_by_input_shape=True).table(...) prints,
    among the rest of the output (several tables add up); names the table cut short ("...") are
    completed when one aten op starts so, else left out and named;
  - a chrome trace, prof.export_chrome_trace("trace.json") (also gzipped, as the tensorboard
    handler writes it); with record_shapes=True it gives shapes and element types too, and its
    nesting tells which op each call was made inside.
A trace or a table cut short gives the ops read before the cut, and exit status 2.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    extract = actions.add_parser("extract", help="ops from a profiler table (in a log) or a chrome trace",
                                 description=EXTRACT, formatter_class=argparse.RawDescriptionHelpFormatter)
    extract.add_argument("profile", type=Path, metavar="PROFILE", help="a log with a profiler table, or a chrome trace")
    _output(extract)
    capture = actions.add_parser("capture", help="run a script and record the aten ops it runs",
                                 description=_doc("capture"), formatter_class=argparse.RawDescriptionHelpFormatter)
    _output(capture)
    capture.add_argument("--steps", type=_positive, metavar="N",
                         help="end the script after N optimizer steps (default: let it run to its end)")
    capture.add_argument("script", type=Path, metavar="SCRIPT", help="the training script")
    capture.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")
    checker = actions.add_parser("check", help="which ops a target has no kernel for", description=_doc("check"),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    checker.add_argument("ops", type=Path, metavar="OPS.json", help="written by extract or capture")
    checker.add_argument("-t", "--target", choices=targets.names(), required=True, help="where the code should run")
    checker.add_argument("--csv", type=Path, metavar="FILE", help=f"also write every verdict to FILE ({RULE})")
    checker.add_argument("--all", action="store_true", help="list the ops that are ok too")
    checker.add_argument("--strict", action="store_true", help="exit 1 if an op is missing, partial or of a lacking dtype")


def _output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--out", type=Path, default=Path("ops.json"), metavar="OPS.json",
                        help=f"where to write the ops (default: %(default)s; {RULE})")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of steps (1 or more)")
    return int(text)


def _doc(action: str) -> str:
    from torchport.ops import capture, check

    return {"capture": capture, "check": check}[action].__doc__


def main(args: argparse.Namespace) -> int:
    return {"extract": run_extract, "capture": run_capture, "check": run_check}[args.action](args)


def run_extract(args: argparse.Namespace) -> int:
    from torchport.ops.extract import extract

    output_file(args.out, "-o")
    found = extract(args.profile, kernels.default())
    opset.write(args.out, found.ops, found.source)
    if found.problem:
        raise UsageError(f"{found.problem}; the {len(found.ops)} ops read are in {args.out}")
    print(f"torchport ops extract: {args.profile}: {len(found.ops)} ops ({_told(found.source)}) -> {args.out}")
    return 0


def _told(source: dict) -> str:
    if source["kind"] == "chrome-trace":
        shapes = "with shapes" if source["record_shapes"] else "no shapes: record_shapes was off"
        return f"chrome trace, {source['events']} operator events, {shapes}"
    cut = source.get("names_cut_short")
    cut_said = f"; {len(cut)} names cut short left out: {', '.join(cut)}" if cut else ""
    return f"{source['tables']} profiler table(s), {source['rows']} rows{cut_said}"


def run_capture(args: argparse.Namespace) -> int:
    if not args.script.is_file():
        raise UsageError(f"{args.script}: no such script")
    output_file(args.out, "-o")  # before the run: a path it cannot write would lose the run
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("capture runs the script with torch, which is not installed here") from None
    from torchport.ops.capture import capture

    outcome = capture(args.script, args.args, args.steps, kernels.default())
    opset.write(args.out, outcome.ops, outcome.source)
    steps = f", {outcome.steps} optimizer steps" if outcome.steps else ""
    if outcome.interrupted:
        print(f"torchport ops capture: interrupted (the {len(outcome.ops)} ops run before are in {args.out})",
              file=sys.stderr)
        return 130
    if outcome.failure:
        print(f"torchport ops capture: error: {outcome.failure} (the {len(outcome.ops)} ops it ran "
              f"before are in {args.out})", file=sys.stderr)
        return 1
    print(f"torchport ops capture: {args.script}: {len(outcome.ops)} ops{steps} on "
          f"{', '.join(sorted(outcome.devices)) or 'no device'} -> {args.out}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    if args.csv:
        output_file(args.csv, "--csv")
    ops, _ = opset.read(args.ops)
    rows = check(ops, args.target, kernels.default())
    shown = rows if args.all else [row for row in rows if row.verdict.value != "ok"]
    if shown:
        print(report.table(shown))
    print(report.summary(rows, args.target))
    target = targets.get(args.target)
    if target.kernels is None and not target.device_chosen_at_run_time:
        print(f"  (no kernel data for {target.name}: its target names none, and torch lists no "
              f"{target.device_type.upper()} kernels; only composite ops, one kernel for every backend, are judged)")
    if args.csv:
        report.write_csv(args.csv, rows, args.target)
    return 1 if args.strict and any(row.verdict.is_problem for row in rows) else 0
