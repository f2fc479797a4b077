"""Running compiled code as a script's `__main__` module, as `runpy.run_path(path,
run_name="__main__")` does: for scripts run rewritten in memory (pre-3.7 code, --distributed)."""

from __future__ import annotations

import builtins
import os
import sys
import types


def execute(code: types.CodeType, path: str) -> None:
    """Run `code` as the `__main__` module of `path`."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__=None, __spec__=None,
                           __builtins__=builtins)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def run_as_main(code: types.CodeType, path: str, argv: list[str]) -> None:
    """Run `code` as `python path argv[1:]` would: sys.argv and sys.path[0] set as python sets
    them, and both put back afterwards (the command may run in a test's process)."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        execute(code, os.path.abspath(path))
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
