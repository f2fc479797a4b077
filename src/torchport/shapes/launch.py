"""A script's instrumented code, compiled as the script's own: runpy.run_path compiles the file
itself, but the copy with the wrapped loop exists only in memory (it is run by
runtime.main_module.run_as_main, as python would run the file)."""

from __future__ import annotations

import os

from torchport.runtime import main_module


def compile_script(source: bytes, path: str):
    """The code object, with the script's own path, so that tracebacks, the report and
    `__file__` name the user's file and lines."""
    return compile(source, os.path.abspath(path), "exec", dont_inherit=True)


def from_the_script(error: BaseException) -> BaseException:
    """`error` with the frames of this package (the command, this launcher) dropped from the top
    of its traceback, so that its report starts at the script's own frame, as under python."""
    ours = (os.path.join(os.path.dirname(os.path.abspath(__file__)), ""), main_module.__file__)
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename.startswith(ours):
        frames = frames.tb_next
    return error.with_traceback(frames)
