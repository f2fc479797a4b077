"""Find the torch calls whose shapes change from step to step, in an unmodified script.

The script's training loop is found from its source: the outermost `for` loop whose body reaches
`.backward()` or an optimizer's `.step()`, directly or through functions of the same file (an
epoch loop around it is passed over). It is wrapped in `DETECTOR.start(...)` in memory (the file
is not changed, its line numbers are kept), and every torch call that the script's code makes in
a step is recorded: functions, Tensor methods and operators, nn.functional, module calls.

A call site is dynamic when its shapes differ from step to step: on an NPU, under torch.compile,
XLA or CUDA graphs each new shape is compiled again. The report lists the dynamic sites in
Ascend's columns (Function Name, File Path, Line Number, Call Stack, Input Shape Range, Output
Shape Range), then ours (Column, Distinct Shapes, Iterations, Dynamic, Varying Dims, Remedy); the
terminal shows the remedies per target: NPU, torch.compile, and what fits the data: padding a
varying length to buckets, padding a varying count of rows (boxes), drop_last for a short last batch.

Each row names the innermost line of the project that made the call. The project is a folder and
everything below it but site-packages: --project DIR, else the nearest folder above the script
with .git, pyproject.toml, setup.py or setup.cfg (tools/train.py: the repository), else the
script's folder. Frames of files elsewhere (installed packages, a site-wide sitecustomize or
shim) are walked past, as torch's are.

examples:
  torchport shapes --steps 20 train.py --epochs 1      report in ./dynamic_shape_report.csv
  torchport shapes --target cpu -o reports train.py    a CUDA script, on the CPU (as torchport run)
  torchrun --nproc_per_node 2 --no-python torchport shapes train.py
                                                       each rank writes dynamic_shape_report.rank<N>.csv

When no such loop is found, wrap yours by hand and run the script with python:
  from torchport.shapes import DETECTOR
  for batch in DETECTOR.start(loader):

The exit status is the program's (0 when --steps ended it). A script that fails still leaves the
report of the steps it finished. torchport's own errors (a bad option, no such script, no loop
found, an output folder that cannot be written) are one line on stderr and status 2, before the
script starts; a missing -o folder is made when the folder above it exists.
"""

from __future__ import annotations

import argparse
import os
import sys

from torchport import targets
from torchport.errors import UsageError
from torchport.report.destination import RULE, output_file, output_folder
from torchport.shapes.callsites import project_of, set_project
from torchport.shapes.detector import DETECTOR, REPORT, StepLimit, prints_here
from torchport.runtime.main_module import run_as_main
from torchport.shapes.launch import compile_script, from_the_script
from torchport.shapes.loops import MANUAL_EDIT, find_training_loops, instrument_source, why_no_training_loop


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", metavar="N",
                        help="stop the program after N steps of the loop, then report (default: run it all)")
    parser.add_argument("-o", "--output", default=".", metavar="DIR",
                        help=f"the directory for the report (default: the current one; {RULE})")
    parser.add_argument("--report", default=REPORT, metavar="NAME",
                        help=f"the report's file name (default {REPORT}; torchrun ranks add .rank<N>)")
    parser.add_argument("--project", metavar="DIR",
                        help="the project's folder: rows name the innermost line of a file under it "
                             "(default: see below)")
    parser.add_argument("--all", action="store_true",
                        help="list the static call sites too (Dynamic column: no)")
    parser.add_argument("--target", choices=["auto", *targets.names()],
                        help="also migrate at run time, as `torchport run --target` does (default: run as written)")
    parser.add_argument("--log", metavar="FILE",
                        help="with --target: the run-time call-site log (default DIR/torchport_run.log)")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                        help="the script and its arguments")


def main(args: argparse.Namespace) -> int:
    from torchport.runtime.command import migrate_at_run_time, require_torch

    steps = _positive(args.steps, "--steps") if args.steps is not None else None
    script, argv = _script(args.program)
    project = _project(args.project, script)
    report = _report_path(args)
    code = _instrumented_code(script)
    require_torch()
    session = migrate_at_run_time(args.target, args.log or os.path.join(args.output, "torchport_run.log")) \
        if args.target else None
    DETECTOR.reset()
    DETECTOR.configure(report=report, include_static=args.all, max_steps=steps, exit_at_limit=True)
    try:
        with set_project(project):
            return _run(code, script, argv)
    finally:
        _report(DETECTOR, steps)
        if session is not None:
            session.log.close()


def _positive(text: str, option: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option} takes a whole number, not {text!r}") from None
    if value < 1:
        raise UsageError(f"{option} must be at least 1, not {value}")
    return value


def _script(program: list[str]) -> tuple[str, list[str]]:
    if not program:
        raise UsageError("give a script to run: torchport shapes [options] script.py [args]")
    script = program[0]
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")
    return script, list(program)


def _instrumented_code(script: str):
    """The script's code with its training loop wrapped; the loops found are named on stderr."""
    try:
        with open(script, "rb") as handle:
            source = handle.read()
        instrumented = instrument_source(source, script)
        loops = find_training_loops(source, script)
    except OSError as error:
        raise UsageError(f"cannot read {script}: {error.strerror or error}") from None
    except SyntaxError as error:
        raise UsageError(f"{script}:{error.lineno}: the script does not parse: {error.msg}") from None
    except ValueError as error:  # source that is not text
        raise UsageError(f"{script}: the script does not parse: {error}") from None
    if instrumented is None:
        if b"DETECTOR.start(" in source:  # wrapped by hand, around a loop we do not recognise
            return compile_script(source, script)
        reason = why_no_training_loop(source, script) or "no for loop reaches .backward() or an optimizer's .step()"
        raise UsageError(f"no training loop found in {script} ({reason}); wrap yours by hand: {MANUAL_EDIT}")
    if prints_here():
        for loop in loops:
            print(f"torchport shapes: recording the loop at {script}:{loop.line}  {loop.header}", file=sys.stderr)
    return compile_script(instrumented, script)


def _project(folder: str | None, script: str) -> str:
    if folder is None:
        return project_of(script)
    if not os.path.isdir(folder):
        raise UsageError(f"--project {folder}: no such folder")
    return folder


def _report_path(args: argparse.Namespace) -> str:
    """The report's path, and the run-time log's with --target, checked before the script runs:
    a report that cannot be written would lose the run (see report/destination.py)."""
    output_folder(args.output, "-o")
    report = os.path.join(args.output, args.report)
    output_file(report, "--report")
    if args.target:
        output_file(args.log or os.path.join(args.output, "torchport_run.log"), "--log")
    return report


def _run(code, script: str, argv: list[str]) -> int:
    """Run the script; its exit status, as `torchport run` gives it."""
    from torchport.runtime.command import close_process_group, exit_status, report_uncaught

    try:
        run_as_main(code, script, argv)
        close_process_group()
    except StepLimit:
        return 0
    except SystemExit as stop:
        close_process_group()
        return exit_status(stop.code)
    except KeyboardInterrupt:
        raise  # the CLI's one line and status 130, after the report
    except BaseException as error:
        report_uncaught(from_the_script(error))
        return 1
    return 0


def _report(detector, steps: int | None) -> None:
    """Write the report of the steps finished; rank 0 (or a process on its own) prints the summary."""
    try:
        written = detector.save()
    except OSError as error:
        print(f"torchport shapes: the report could not be written: {error}", file=sys.stderr)
        return
    if prints_here():
        if steps is not None and detector.steps >= steps:
            print(f"torchport shapes: stopped after {detector.steps} steps (--steps {steps})", file=sys.stderr)
        print(detector.summary(written), file=sys.stderr)
