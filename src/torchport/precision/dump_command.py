"""Record what a training run computes, to compare it with another run (torchport compare).

For the first N optimizer steps (--steps, default 2), per module call and per torch call the
project's own code makes (`F.gelu(x)`, `x @ w`, `torch.softmax(...)` in a forward it wrote or in
its loop; not the calls inside torch's modules, optimizers or libraries, and not views, reshapes,
copies or metadata reads), in execution order: each floating-point output and the gradient that
reaches it in backward, as statistics (shape, dtype, min, max, mean, norm, NaN and Inf counts) and
an evenly strided sample of 512 elements; the loss and each parameter's gradient norm per step;
and the settings that change the numbers (torch and torchport versions, target, default dtype,
matmul precision, determinism flags, threads, seeds, numeric environment variables, autocast).
Then the script is stopped. With --tensors, the whole forward outputs and gradients of the modules
whose path matches are kept too, and compare measures those over every element. torch, random and
numpy are seeded before the script runs (--seed), so that two runs of the same script dump the
same numbers; the script's own seeding prevails.

The script runs as `python script.py ARGS` would, or with --target migrated at run time as
`torchport run --target` runs it (an unmodified CUDA script on the CPU, say). Already migrated
code runs as it is. Nothing is written but DIR/dump.json and DIR/samples.pt (DIR/tensors.pt with
--tensors, and the run-time log with --target).

examples:
  torchport dump -o cuda_on_cpu --target cpu train.py --epochs 1    the original, migrated at run time
  torchport dump -o migrated migrated/train.py --epochs 1           its migrate output, as it is
  torchport compare cuda_on_cpu migrated                            the first call that parts
  torchport dump -o d --tensors 'Net.layer2.*' --tensors Net.fc train.py   keep those modules' whole tensors
  torchrun --nproc_per_node 2 --no-python torchport dump -o d train.py    each rank in d/rank<N>

exit status: 0 dumped (the script ended, or --steps stopped it); 1 the script failed (what it
recorded is still written); 2 bad input (one line); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys

from torchport import targets
from torchport.errors import UsageError
from torchport.report.destination import RULE, output_folder

DEFAULT_STEPS = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help=f"the folder for the dump ({RULE})")
    parser.add_argument("--steps", type=_count, default=DEFAULT_STEPS, metavar="N",
                        help="record N optimizer steps, then stop the script (default: %(default)s; 0: run it all)")
    parser.add_argument("--target", choices=["auto", *targets.names()],
                        help="migrate at run time, as `torchport run --target` does (default: run as written)")
    parser.add_argument("--log", metavar="FILE", help="with --target: the run-time call-site log (default DIR/torchport_run.log)")
    parser.add_argument("--seed", type=_count, default=0, metavar="N", help="the seed set before the script runs (default: 0)")
    parser.add_argument("--tensors", action="append", default=[], metavar="GLOB",
                        help="also keep the whole forward outputs and gradients of the modules whose path (as compare "
                             "names it: Net.layer2.0.conv1) matches GLOB (fnmatch: 'Net.layer2.*'; repeatable), in "
                             "DIR/tensors.pt, in their own dtype; compare then measures those calls over every element, "
                             "not the 512-element sample (torch calls inside the modules keep their samples)")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                        help="the script and its arguments")


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0 or more)")
    return int(text)


def main(args: argparse.Namespace) -> int:
    from torchport.runtime.command import migrate_at_run_time, refuse_invalid_python, require_torch

    if not args.program:
        raise UsageError("give a script to run: torchport dump -o DIR [options] script.py [args]")
    script = args.program[0]
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")
    renamed = refuse_invalid_python(script, script, renamable=True)
    output_folder(args.output, "-o")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # (under torchrun: each rank dumps into DIR/rank<N>)
        args.output = str(output_folder(os.path.join(args.output, f"rank{os.environ.get('RANK', '0')}"), "-o"))
    require_torch()
    log = args.log or os.path.join(args.output, "torchport_run.log")
    session = migrate_at_run_time(args.target, log) if args.target else None
    try:
        return _dump(args, script, renamed)
    finally:
        if session is not None:
            session.log.close()


def _dump(args: argparse.Namespace, script: str, renamed: bytes | None) -> int:
    from torchport.precision import dumpfile
    from torchport.precision.recorder import DumpRecorder, EnoughSteps
    from torchport.precision.settings import fix_seeds, settings
    from torchport.runtime.command import close_process_group, exit_status, report_uncaught
    from torchport.runtime.main_module import run_as_main
    from torchport.shapes.callsites import project_of
    from torchport.shapes.launch import compile_script, from_the_script

    with open(script, "rb") as file:
        code = compile_script(renamed if renamed is not None else file.read(), script)
    seeds = fix_seeds(args.seed)
    recorder = DumpRecorder(args.steps or None, tuple(args.tensors), project_of(script))
    status, ended = 0, "ended"
    try:
        with recorder:
            run_as_main(code, script, list(args.program))
    except EnoughSteps:
        ended = f"stopped after {recorder.step} optimizer steps (--steps {args.steps})"
    except SystemExit as stop:
        status = exit_status(stop.code)
        ended = f"exited with status {status}"
    except KeyboardInterrupt:
        status, ended = 130, "interrupted"
    except BaseException as error:  # the script's own failure: reported as python would, the dump kept
        report_uncaught(from_the_script(error))
        status, ended = 1, f"raised {type(error).__name__}"
    finally:
        close_process_group()
    target = args.target or os.environ.get("TORCHPORT_TARGET")  # (torch's entry point patched for it)
    found = settings(target, script, list(args.program), seeds)
    found["devices"] = sorted({record["device"] for record in recorder.records})
    found["autocast_dtypes"] = sorted(recorder.autocast_dtypes)
    dump = dumpfile.Dump(args.output, found, [recorder.steps[s] for s in sorted(recorder.steps)],
                         recorder.records, recorder.samples, ended, recorder.tensors)
    size = dumpfile.write(args.output, dump)
    from_calls = sum(1 for record in recorder.records if "api" in record)
    kept = f", {len(recorder.tensors)} kept whole" if args.tensors else ""
    print(f"torchport dump: {script}: {ended}; {len(recorder.steps)} steps, {len(recorder.records)} tensors "
          f"({from_calls} of torch calls{kept}) -> {args.output} ({size / 1e6:.1f} MB)", file=sys.stderr)
    if recorder.unrecorded:
        print(f"torchport dump: {sum(recorder.unrecorded.values())} torch calls could not be recorded (their "
              f"outputs' values cannot be read here): {', '.join(sorted(recorder.unrecorded))}", file=sys.stderr)
    if args.tensors and not recorder.tensors:
        print(f"torchport dump: no module path matched --tensors {' '.join(args.tensors)}", file=sys.stderr)
    first = next((r for r in recorder.records if r["nan"] or r["inf"]), None)
    if first is not None:
        print(f"torchport dump: NaN/Inf first at {dumpfile.record_name(first)} "
              f"({first['source']}): {first['nan']} NaN, {first['inf']} Inf", file=sys.stderr)
    return status
