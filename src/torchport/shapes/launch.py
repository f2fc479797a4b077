"""Run a script's instrumented code as `__main__`, as `python script.py` would run the file.

runpy.run_path compiles the file itself; the copy with the wrapped loop exists only in memory, so
its code object is run here the same way: a fresh `__main__` module, sys.argv and sys.path[0] as
python sets them, and all three put back afterwards (the command may run in a test's process).
"""

from __future__ import annotations

import builtins
import os
import sys
import types


def compile_script(source: bytes, path: str):
    """The code object, with the script's own path, so that tracebacks, the report and
    `__file__` name the user's file and lines."""
    return compile(source, os.path.abspath(path), "exec", dont_inherit=True)


def run_as_main(code, path: str, argv: list[str]) -> None:
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=os.path.abspath(path), __builtins__=builtins, __cached__=None,
                           __loader__=None, __package__=None, __spec__=None)
    saved_main, saved_argv, saved_path = sys.modules.get("__main__"), sys.argv, list(sys.path)
    sys.modules["__main__"] = module
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        exec(code, module.__dict__)
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        sys.argv = saved_argv
        sys.path[:] = saved_path


def from_the_script(error: BaseException) -> BaseException:
    """`error` with the frames of this package (the command, this launcher) dropped from the top
    of its traceback, so that its report starts at the script's own frame, as under python."""
    ours = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename.startswith(ours):
        frames = frames.tb_next
    return error.with_traceback(frames)
