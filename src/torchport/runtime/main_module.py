"""Running compiled code as a script's `__main__` module, as `runpy.run_path(path,
run_name="__main__")` does: for scripts run rewritten in memory (pre-3.7 code, --distributed)."""

from __future__ import annotations

import builtins
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
