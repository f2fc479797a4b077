"""Run an unmodified CUDA script on another target, patching torch at run time.

Every redirected torch.cuda call, CUDA device and "nccl" backend is logged once per call site
(file:line  API -> replacement [verdict]) with a summary at exit. torch.cuda.is_available() answers
True to the script but tells the truth to torch and to libraries that probe the hardware.

examples:
  torchport run --target cpu train.py --epochs 1
  torchport run --log run.log -m mypackage.train --lr 0.1
  torchport run -m torch.distributed.run --nproc_per_node 2 train.py   (ranks inherit the target)
  torchport run --distributed --nproc-per-node 2 train.py --epochs 1   (a single-card script on 2 processes)

--distributed runs a single-card training script as one process of N, as `migrate --distributed`
would rewrite it (process group from the launcher, DistributedSampler, DDP, rank 0 saves and
prints), rewritten in memory only: tracebacks show the script's own lines. Under a launcher
(torchrun, run_distributed.sh: LOCAL_RANK is set) this process is one rank; with
--nproc-per-node N and no launcher, torchport starts torchrun on one machine with N processes,
each running this command. Without either, it runs as one process, as the script did. A script
that is distributed already runs as it is (stderr says so).

The exit status is the program's, as under python (130 on Ctrl-C). torchport's own errors (a bad
option, no such script, no torch) are one line on stderr and status 2.

Without torchport run: put `import torchport.auto` first in the script, or set
TORCHPORT_TARGET=cpu (e.g. `TORCHPORT_TARGET=cpu torchrun --nproc_per_node 2 train.py`).
"""

from __future__ import annotations

import argparse
import os
import sys

from torchport import targets
from torchport.distribute.modes import BATCH_MODES
from torchport.errors import UsageError
from torchport.runtime.autoload import DEFAULT_LOG, RANKS_LOG_ENV
from torchport.runtime import main_module, pre37
from torchport.syntax import BEFORE_37, PYTHON2, syntax_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default="auto", choices=["auto", *targets.names()],
                        help=f"where to run (default auto: the first available of {', '.join(targets.auto_order())}, else cpu)")
    parser.add_argument("--log", metavar="FILE",
                        help="call-site log (default torchport_run.log; torchrun ranks add .rank<N>, mp.spawn processes .proc<I>)")
    parser.add_argument("--honest-to", metavar="PKGS",
                        help="comma-separated packages that see the real torch.cuda "
                             "(default: torch, accelerate, transformers, triton and other hardware probers)")
    parser.add_argument("--distributed", action="store_true",
                        help="run the script as one process of N (one per device): rewritten in memory as "
                             "migrate --distributed would (see below)")
    parser.add_argument("--nproc-per-node", metavar="N",
                        help="with --distributed and no launcher: start torchrun with N processes on this machine")
    parser.add_argument("--distributed-batch", metavar="{global,per-rank}",
                        help="with --distributed: global (default) splits the batch across the processes; "
                             "per-rank keeps it and multiplies the learning rate by WORLD_SIZE")
    parser.add_argument("--amp", action="store_true",
                        help="mixed precision for a script that trains in float32, as migrate --amp torch writes it: "
                             "the outermost forward of a module in training mode under autocast (float16 on npu, "
                             "bfloat16 on a CPU with native bfloat16, off without), a GradScaler around backward "
                             "and step where the dtype is float16; nothing where the script has AMP of its own")
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [args]",
                        help="run a module, as python -m does (everything after it is the module's)")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                        help="the script and its arguments")


def main(args: argparse.Namespace) -> int:
    nproc = _distributed_options(args)
    argv, run = _plan(args)
    require_torch()
    args.log = args.log or os.environ.get(RANKS_LOG_ENV) or DEFAULT_LOG
    if nproc is not None and "LOCAL_RANK" not in os.environ:  # (a launcher's process is one rank)
        from torchport.runtime import distributed

        return distributed.launch(nproc, _rank_command(args), os.path.abspath(args.log))
    from torchport import runtime
    from torchport.runtime.autoload import LOG_ENV, TARGET_ENV
    from torchport.runtime.callers import HONEST_ENV

    try:
        session = runtime.apply(args.target, log=args.log, honest_to=args.honest_to)
    except runtime.TargetError as error:
        raise UsageError(str(error)) from None
    # Child processes (torchrun ranks, spawned workers) patch themselves through the entry point.
    os.environ[TARGET_ENV] = session.target.name
    if args.amp:
        from torchport.runtime import amp_training

        amp_training.install(session)
        os.environ[amp_training.AMP_ENV] = "torch"
    os.environ[LOG_ENV] = os.path.abspath(args.log)
    if args.honest_to is not None:
        os.environ[HONEST_ENV] = args.honest_to
    sys.argv = argv
    finder = pre37.install(_project_root(args), session.log)
    try:
        run(session.log)
        close_process_group()
    except SystemExit as stop:
        close_process_group()
        return exit_status(stop.code)
    except KeyboardInterrupt:
        raise  # the CLI's one line and status 130
    except runtime.NoStandIn as error:
        report_no_stand_in(error)
        return 1
    except BaseException as error:
        report_uncaught(error)
        return 1
    finally:
        finder.remove()
        session.log.close()
    return 0


def require_torch() -> None:
    """Import torch now, so that a Python without a working one is a one-line error (exit 2)
    rather than a traceback from deep inside the patcher."""
    try:
        import torch  # noqa: F401
    except (ImportError, OSError) as error:  # OSError: one of torch's shared libraries is missing
        where = f"in this Python ({sys.executable})"
        if getattr(error, "name", None) == "torch":
            raise UsageError(f"PyTorch is not installed {where}: install torch first") from None
        raise UsageError(f"PyTorch fails to import {where}: {error}") from None


def migrate_at_run_time(target: str, log: str):
    """Patch torch for `target` as `torchport run` does, its child processes included (for the
    commands that run a script under a target: shapes, dump); the Session, or a UsageError."""
    from torchport import runtime
    from torchport.runtime.autoload import LOG_ENV, TARGET_ENV

    try:
        session = runtime.apply(target, log=log)
    except runtime.TargetError as error:
        raise UsageError(str(error)) from None
    os.environ[TARGET_ENV] = session.target.name
    os.environ[LOG_ENV] = os.path.abspath(log)
    return session


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
        if found.origin and found.origin.endswith(".py"):
            refuse_invalid_python(found.origin, module, renamable=True)  # (the import hook renames async=)
        return [found.origin or module, *args.program, *module_args], (
            lambda log: runpy.run_module(module, run_name="__main__", alter_sys=True))
    if not args.program:
        raise UsageError("give a script to run (torchport run [options] script.py [args]) or -m MODULE")
    script = args.program[0]
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")
    in_memory = refuse_invalid_python(script, script, renamable=not args.distributed)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    if args.distributed:
        from torchport.runtime import distributed  # (LibCST: only for --distributed)

        run = distributed.runner(script, args.distributed_batch or "global")
        return list(args.program), lambda log: run()
    if in_memory is None:
        in_memory = pre37.legacy_source(script)
    if in_memory is not None:  # (code from before PyTorch 0.4: async=, one-element results, in memory)
        return list(args.program), lambda log: pre37.run_script(script, in_memory, log)
    return list(args.program), lambda log: runpy.run_path(script, run_name="__main__")


def _project_root(args) -> str:
    """The folder of the project's own modules: the script's, or the current one for -m."""
    if args.module is not None:
        return os.getcwd()
    return os.path.dirname(os.path.abspath(args.program[0]))


def _distributed_options(args) -> int | None:
    """The processes to start (None: none, this one runs), or a UsageError."""
    if not args.distributed:
        given = next((option for option, value in (("--nproc-per-node", args.nproc_per_node),
                                                   ("--distributed-batch", args.distributed_batch)) if value), None)
        if given:
            raise UsageError(f"{given} goes with --distributed")
        return None
    if args.module is not None:
        raise UsageError("--distributed runs a script (torchport run --distributed script.py), not -m MODULE")
    if args.distributed_batch not in (None, *BATCH_MODES):
        raise UsageError(f"--distributed-batch {args.distributed_batch}: choose global or per-rank")
    if args.nproc_per_node is None:
        return None
    if not args.nproc_per_node.isdigit() or int(args.nproc_per_node) < 1:
        raise UsageError(f"--nproc-per-node {args.nproc_per_node}: give a number of processes, 1 or more")
    return int(args.nproc_per_node)


def _rank_command(args) -> list[str]:
    """What each of torchrun's processes runs: this command, less --nproc-per-node."""
    command = ["run", "--distributed", "--target", args.target]  # (the log goes by RANKS_LOG_ENV)
    if args.honest_to is not None:
        command += ["--honest-to", args.honest_to]
    if args.amp:
        command.append("--amp")
    if args.distributed_batch:
        command += ["--distributed-batch", args.distributed_batch]
    return [*command, *args.program]


def refuse_invalid_python(path: str, name: str, renamable: bool = False) -> bytes | None:
    """A script Python cannot compile (code for Python 2, `x.cuda(async=True)` from before 3.7)
    is one line saying why and what to do, not the compiler's traceback from inside runpy; with
    `renamable`, one that renaming its async= arguments makes valid is not refused: its renamed
    source is returned (None: the script compiles as it is)."""
    try:
        with open(path, "rb") as file:
            problem = syntax_problem(file.read(), path)
        if problem is None:
            return None
        renamed = pre37.renamed_source(path) if renamable and problem.era == BEFORE_37 else None
    except OSError as error:
        raise UsageError(f"cannot read {name}: {error.strerror or error}") from None
    if renamed is not None:
        return renamed
    remedy = {
        BEFORE_37: f": migrate it first (torchport migrate {name} -o OUT rewrites async= as non_blocking=)",
        PYTHON2: ": port it to Python 3 first",
    }.get(problem.era, "")
    raise UsageError(f"{name} is {problem}{remedy}")


def close_process_group() -> None:
    """Destroy the default process group a script that ended left open, as torch asks a script to
    at its end: otherwise gloo's worker threads may still hold work when the interpreter is torn
    down, and a rank aborts at exit ("terminate called without an active exception",
    pytorch/pytorch#190489 and #179291), failing its launch after the script succeeded."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def report_no_stand_in(error: ImportError) -> None:
    """An uncaught import of a CUDA-only package nothing stands in for: one line, at the program's
    import statement (the last of its frames), saying what to do (the program's failure: status 1)."""
    import torchport

    ours = os.path.dirname(torchport.__file__)
    where = None
    frames = error.__traceback__
    while frames is not None:
        filename = frames.tb_frame.f_code.co_filename
        if not filename.startswith(("<frozen", ours)):
            where = f"{filename}:{frames.tb_lineno}: "
        frames = frames.tb_next
    print(f"torchport run: {where or ''}{error}", file=sys.stderr)


def report_uncaught(error: BaseException) -> None:
    """Report the program's uncaught exception as python would (through sys.excepthook, which the
    program may have replaced), its traceback starting at the program's own frame: the frames of
    our launcher (this module, runpy) are dropped from the top. Chained exceptions keep theirs."""
    import runpy

    launcher = {main.__code__.co_filename, runpy.run_path.__code__.co_filename, main_module.__file__, pre37.__file__}
    if "torchport.runtime.distributed" in sys.modules:  # (not imported for it: it brings the rewriter)
        launcher.add(sys.modules["torchport.runtime.distributed"].__file__)
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename in launcher:
        frames = frames.tb_next
    error.with_traceback(frames)  # the default hook prints the exception's own, not its argument
    try:
        sys.excepthook(type(error), error, frames)
    except Exception:  # a broken hook of the program's: the standard report still
        sys.__excepthook__(type(error), error, frames)
