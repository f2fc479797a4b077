"""Show the settings that [tool.torchport] in pyproject.toml gives, and where each comes from.

    [tool.torchport]
    target = "npu"
    exclude = ["tests/*", "*_pb2.py"]
    select = ["TP0", "TP11"]
    jobs = 0

The file read is the one --config names (a pyproject.toml, or a TOML file holding the keys at its
top level), else the nearest pyproject.toml that has a [tool.torchport] table, looking up from
the first SRC (from the current folder for a command without one), as ruff finds [tool.ruff].
Its keys: target, from, select, ignore, extend-select, exclude, include, apply-affinity, jobs, amp. Each is
a command-line option without its dashes and takes what the option takes: a list for one given
many times (or with commas), true or false for a flag. An option on the command line wins over
its key; a key that a command has no option for is left to the commands that have it. The
commands that read source trees (SRC: migrate, analyze, check) take the settings; run, shapes and
targets do not (their --target is where code runs now, not where a tree is going). An unknown
key or a bad value is an error naming the file and the key (exit status 2).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # (tomllib is 3.11's; tomli is the same parser, for 3.10)
    import tomli as tomllib

from torchport.errors import UsageError

KEYS = ("target", "from", "select", "ignore", "extend-select", "exclude", "include", "apply-affinity", "jobs", "amp")
_DESTS = {"from": "source"}  # (a key whose option's dest is not its name: `from` is a Python keyword)
PYPROJECT = "pyproject.toml"
# the commands whose options a key sets, for `torchport config` (applying a key asks the parser at hand)
SETTLED_COMMANDS = ("torchport.migrate.command", "torchport.analyze.command", "torchport.check.command")


def dest(key: str) -> str:
    """The argparse dest of a key: its option without the dashes."""
    return _DESTS.get(key, key.replace("-", "_"))


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # the file read (None: none found)
    table: dict = field(default_factory=dict)  # key -> its value as written

    def problem(self, key: str, what: str) -> UsageError:
        return UsageError(f"{self.path}: [tool.torchport] {key}: {what}")


def add_argument(parser: argparse.ArgumentParser) -> None:
    """--config, on a command that has an option a key sets."""
    if _actions(parser):
        add_config_argument(parser)


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", type=Path, metavar="FILE",
        help="read settings from FILE instead of the nearest pyproject.toml's [tool.torchport] "
        "(the command line still wins)",
    )


def apply(args: argparse.Namespace, parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Set in `args` each option that the config has a key for and the command line (`argv`, the
    command's own words) does not give."""
    actions = _actions(parser)
    if not actions:
        return
    config = for_args(args)
    given = _given(parser, argv, actions)
    for key, value in config.table.items():
        name = dest(key)
        if name in actions and name not in given:
            setattr(args, name, convert(actions[name], value, config, key))


def for_args(args: argparse.Namespace) -> Config:
    """The config --config names, else the nearest one above the first SRC (or the current folder)."""
    named = getattr(args, "config", None)
    if named is not None:
        return load(named)
    sources = getattr(args, "src", None)
    first = sources[0] if isinstance(sources, list) and sources else sources
    start = Path(first).resolve() if first else Path.cwd().resolve()
    return nearest(start if start.is_dir() else start.parent)


def nearest(start: Path) -> Config:
    """The nearest pyproject.toml with a [tool.torchport] table at or above `start`."""
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file():
            table = _table(candidate, _read(candidate))
            if table is not None:
                return _checked(Config(candidate, table))
    return Config()


def load(path: Path) -> Config:
    """The config in `path` (--config): its [tool.torchport] table, or, in a file that is not a
    pyproject.toml, its top level."""
    if not path.is_file():
        raise UsageError(f"--config {path}: no such file")
    document = _read(path)
    table = _table(path, document)
    if table is None:
        if path.name == PYPROJECT:
            raise UsageError(f"--config {path}: it has no [tool.torchport] table")
        table = document
    return _checked(Config(path, table))


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))  # (loads: tomli 1.1's load took text)
    except OSError as error:
        raise UsageError(f"{path}: cannot be read: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not valid TOML ({error})") from None


def _table(path: Path, document: dict) -> dict | None:
    tool = document.get("tool")
    table = tool.get("torchport") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.torchport] is not a table")
    return table


def _checked(config: Config) -> Config:
    for key in config.table:
        if key not in KEYS:
            near = next((k for k in KEYS if dest(k) == dest(key)), None)
            hint = f" (spelled {near})" if near else f" (known: {', '.join(KEYS)})"
            raise config.problem(key, f"unknown key{hint}")
    return config


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's options that a key sets, by dest (none for a command that reads no SRC)."""
    if not any(action.dest == "src" and not action.option_strings for action in parser._actions):
        return {}
    dests = {dest(key) for key in KEYS}
    return {action.dest: action for action in parser._actions if action.dest in dests and action.option_strings}


def _given(parser: argparse.ArgumentParser, argv: list[str], actions: dict[str, argparse.Action]) -> set[str]:
    """The dests among `actions` that `argv` sets: it is parsed again with their defaults None,
    so that `--target cpu` counts as given even where cpu is the default."""
    defaults = {name: action.default for name, action in actions.items()}
    try:
        for action in actions.values():
            action.default = None
        seen, _ = parser.parse_known_args(argv)
    finally:
        for name, action in actions.items():
            action.default = defaults[name]
    return {name for name in actions if getattr(seen, name, None) is not None}


def convert(action: argparse.Action, value, config: Config, key: str):
    """`value` as written in the config, made what the option would give on the command line (its
    type, choices and action apply: an appending option appends each item to its default); a
    UsageError naming the file and the key when it cannot be."""
    if action.nargs == 0:  # a flag
        if not isinstance(value, bool):
            raise config.problem(key, f"{value!r} is not true or false")
        if isinstance(action, argparse.BooleanOptionalAction):
            return value
        return action.const if value else action.default
    items = value if isinstance(value, list) else [value]
    texts = [_text(item, config, key) for item in items]
    many = action.nargs in ("*", "+") or (isinstance(action.nargs, int) and action.nargs > 1)
    repeatable = isinstance(action, (argparse._AppendAction, argparse._ExtendAction))
    if not (many or repeatable):
        texts = [",".join(texts)]  # an option that takes one value: a list is its comma-separated form
    values = [_one(action, text, config, key) for text in texts]
    namespace = argparse.Namespace(**{action.dest: action.default})
    for given in [values] if many else values:
        action(None, namespace, given)
    return getattr(namespace, action.dest)


def _text(value, config: Config, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise config.problem(key, f"{value!r} is not a string or a number")
    return str(value)


def _one(action: argparse.Action, text: str, config: Config, key: str):
    try:
        value = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, TypeError, ValueError, UsageError) as error:
        raise config.problem(key, str(error) or f"{text!r} is not a valid value") from None
    if action.choices is not None and value not in action.choices:
        raise config.problem(key, f"{text!r} is not one of {', '.join(map(str, action.choices))}")
    return value


# --- `torchport config` -----------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "src", type=Path, nargs="*", metavar="SRC",
        help="look for pyproject.toml from here, as a command given this SRC does (default: the current folder)",
    )
    add_config_argument(parser)


def main(args: argparse.Namespace) -> int:
    config = for_args(args)
    where = f"{config.path} [tool.torchport]" if config.path else "none found (no pyproject.toml with [tool.torchport] above SRC)"
    print(f"config: {where}")
    parsers = _command_parsers()
    for key in KEYS:
        takers = {name: actions[dest(key)] for name, actions in parsers.items() if dest(key) in actions}
        if not takers:
            print(f"  {key:<15} {'-':<28} no command of this version takes it")
            continue
        action = next(iter(takers.values()))
        if key in config.table:
            value, origin = convert(action, config.table[key], config, key), str(config.path)
        else:
            value, origin = action.default, "default"
        print(f"  {key:<15} {_shown(value):<28} {origin} ({', '.join(takers)})")
    return 0


def _command_parsers() -> dict[str, dict[str, argparse.Action]]:
    """Each command that takes settings (and exists here): its options that a key sets."""
    found = {}
    for module_name in SETTLED_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):  # (a command this version lacks)
                continue
            raise
        parser = argparse.ArgumentParser(add_help=False)
        module.add_arguments(parser)
        found[module_name.split(".")[1]] = _actions(parser)
    return found


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "(none)"
    return "(none)" if value is None else str(value)
