"""Run an unmodified CUDA script on another target, patching torch at run time.

Every redirected torch.cuda call, CUDA device and "nccl" backend is logged once per call site
(file:line  API -> replacement [verdict]) with a summary at exit. torch.cuda.is_available() answers
True to the script but tells the truth to torch and to libraries that probe the hardware.

examples:
  torchport run --target cpu train.py --epochs 1
  torchport run --log run.log -m mypackage.train --lr 0.1
  torchport run -m torch.distributed.run --nproc_per_node 2 train.py   (ranks inherit the target)

Without torchport run: put `import torchport.auto` first in the script, or set
TORCHPORT_TARGET=cpu (e.g. `TORCHPORT_TARGET=cpu torchrun --nproc_per_node 2 train.py`).
"""

from __future__ import annotations

import argparse
import os
import sys

from torchport import targets
from torchport.errors import UsageError



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default="auto", choices=["auto", *targets.names()],
                        help="where to run (default auto: the first available of npu, xpu, mps, else cpu)")
    parser.add_argument("--log", default="torchport_run.log", metavar="FILE",
                        help="call-site log (default torchport_run.log; torchrun ranks add .rank<N>, mp.spawn processes .proc<I>)")
    parser.add_argument("--honest-to", metavar="PKGS",
                        help="comma-separated packages that see the real torch.cuda "
                             "(default: torch, accelerate, transformers, triton and other hardware probers)")
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [args]",
                        help="run a module, as python -m does (everything after it is the module's)")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                        help="the script and its arguments")


def main(args: argparse.Namespace) -> int:
    argv, run = _plan(args)
    from torchport import runtime
    from torchport.runtime.autoload import LOG_ENV, TARGET_ENV
    from torchport.runtime.callers import HONEST_ENV

    try:
        session = runtime.apply(args.target, log=args.log, honest_to=args.honest_to)
    except runtime.TargetError as error:
        raise UsageError(str(error)) from None
    # Child processes (torchrun ranks, spawned workers) patch themselves through the entry point.
    os.environ[TARGET_ENV] = session.target.name
    os.environ[LOG_ENV] = os.path.abspath(args.log)
    if args.honest_to is not None:
        os.environ[HONEST_ENV] = args.honest_to
    sys.argv = argv
    try:
        run()
    except SystemExit as stop:
        return _exit_status(stop.code)
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    finally:
        session.log.close()
    return 0


def _plan(args):
    """(sys.argv for the program, a function that runs it), or a UsageError."""
    import importlib.util
    import runpy

    if args.module is not None:
        if not args.module:
            raise UsageError("-m needs a module name")
        module, *module_args = args.module
        sys.path.insert(0, os.getcwd())
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise UsageError(f"no module named {module}")
        return [found.origin or module, *args.program, *module_args], (
            lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))
    if not args.program:
        raise UsageError("give a script to run (torchport run [options] script.py [args]) or -m MODULE")
    script = args.program[0]
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    return list(args.program), lambda: runpy.run_path(script, run_name="__main__")


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
