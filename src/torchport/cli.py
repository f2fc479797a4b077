"""The `torchport` command. One thin function per sub-command; the work lives in the packages below.

Each sub-command module exposes `add_arguments(parser)` and `main(args) -> int`. Modules are
imported only when their command runs, so `torchport migrate` never imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from torchport import __version__
from torchport import config as configuration
from torchport.errors import UsageError

# name -> (module, one-line help)
COMMANDS = {
    "migrate": ("torchport.migrate.command", "rewrite CUDA code for another target into a new tree"),
    "run": ("torchport.runtime.command", "run an unmodified CUDA script on another target"),
    "shapes": ("torchport.shapes.command", "find the torch calls whose shapes change from step to step"),
    "check": ("torchport.check.command", "list what a migration would change, as a linter lists findings"),
    "analyze": ("torchport.analyze.command", "report what will not move, what to tune, and third-party CUDA"),
    "ops": ("torchport.ops.command", "which aten ops a run uses that a target has no kernel for"),
    "dump": ("torchport.precision.dump_command", "record what a run computes, per module and torch call, to compare it"),
    "compare": ("torchport.precision.compare_command", "compare two dumps and name the first call that parts"),
    "targets": ("torchport.targets.command", "list the targets, or what each torch.cuda API becomes"),
    "config": ("torchport.config", "show the settings [tool.torchport] in pyproject.toml gives, and where each comes from"),
}

DESCRIPTION = """\
Move PyTorch CUDA training code to Huawei Ascend NPU, Intel XPU, Apple MPS, plain CPU, or
device-agnostic code (torch.accelerator).

examples:
  torchport migrate train.py -o ported --target npu       rewrite a script into ported/
  torchport migrate repo/ --target cpu --diff             preview the changes only
  torchport migrate repo/ --in-place --target npu         rewrite repo/ itself (a clean git tree)
  torchport check repo/ --target npu                      what would change, as path:line:col: CODE (exit 1)
  torchport run --target cpu train.py --epochs 1          run CUDA code as it is, on the CPU
  torchport analyze repo/ -o report --target npu          what will not move, and what to tune
  torchport shapes --steps 20 train.py                    which calls change shapes from step to step
  torchport ops capture -o ops.json --steps 3 train.py    the aten ops a run uses; then: ops check
  torchport dump -o ref --target cpu train.py             what a run computes; then: compare ref other
  torchport targets --target accelerator                  what each torch.cuda API becomes
"""


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser; only the chosen sub-command's module is imported (the others stay unloaded)."""
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = argparse.ArgumentParser(
        prog="torchport", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"torchport {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if name != chosen:
            sub.add_parser(name, help=help_text)
            continue
        module = importlib.import_module(module_name)
        command = sub.add_parser(
            name,
            help=help_text,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(command)
        configuration.add_argument(command)
        command.set_defaults(handler=module.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    if args.command is None:
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        parser.print_help()
        return 2
    command = _command_parser(parser, args.command)
    if unknown:  # (the command's usage, not the top-level one)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        configuration.apply(args, command, argv[argv.index(args.command) + 1 :])
        status = args.handler(args)
    except UsageError as error:
        print(f"torchport {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"torchport {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `torchport targets | head`: the reader has all it wanted
        _drop_stdout()
        return 0
    return _flush_stdout(status)


def _command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[name]


def _flush_stdout(status: int) -> int:
    """Flush stdout now: a reader that left early (`torchport targets | head -3`) is then seen here
    and ends us quietly, instead of at interpreter exit as "Exception ignored ... BrokenPipeError",
    exit 120. The last buffer of output (all of a short listing) is written by this flush."""
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        return status
    try:
        stream.flush()
    except BrokenPipeError:
        _drop_stdout()
    return status


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null, so that the flush at exit of what is still buffered is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


if __name__ == "__main__":
    raise SystemExit(main())
