"""Where a torch call comes from: the innermost frame inside the project, judged once per code
object, so that a call in a training loop costs a few dict look-ups after its first time (Ascend's
hook calls `traceback.extract_stack()` on every call instead).

Three kinds of frame. USER frames are the project's: the walk from a call stops at the first.
PASS frames are everything else: torch's, torchport's, the standard library's, code that torch
generates, installed packages, and any file outside the project (a site-wide sitecustomize or a
shim that wraps torch functions): walked past, so `F.dropout(x)` is named at the user's line, not
inside torch/nn/functional.py, and a shim's wrapper at the project's line that called it.
BARRIER frames are the calls of an nn.Module's forward and torch.optim's code: a call below one is
made by a library module or an optimizer, not by the user (the module's own call is recorded, at
the user's line, by the forward hook), so it is not recorded at all.

The project is a folder and everything below it, but no `site-packages` (a virtual environment
kept inside it): the one given (`torchport shapes --project DIR`, `set_project`), else the project
of the script python runs (`__main__`) when the wrapped loop's file is inside it, else the wrapped
loop's file's. A file's project is the nearest folder above it that a repository or a package
build marks (`.git`, `pyproject.toml`, `setup.py`, `setup.cfg`: `tools/train.py` belongs to the
repository, its `models/` included), else the file's own folder. Code with no file (`<string>`,
`<stdin>`) counts as the project's: nothing says it is not.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig

USER, PASS, BARRIER = 0, 1, 2
_INTERNAL_PACKAGES = ("torch", "torchport", "")  # "": generated code, e.g. FX's <eval_with_key>
_INSTALLED = ("site-packages", "dist-packages")
MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")  # what makes a folder a project's root
_project: str | None = None  # set_project's folder


@contextlib.contextmanager
def set_project(folder: str | None):
    """The project's folder for the detectors made while the block runs (None: found as above)."""
    global _project
    saved, _project = _project, None if folder is None else os.path.realpath(folder)
    try:
        yield
    finally:
        _project = saved


def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({os.path.join(paths[key], "") for key in ("stdlib", "platstdlib") if key in paths})


class CallSites:
    """Classifies frames, once per code object, and finds the user's frame of a call."""

    def __init__(self) -> None:
        import torch

        self.kinds: dict[int, int] = {}  # id(code) -> kind (the capture's hot path reads it directly)
        self._codes: list = []  # every classified code object, kept alive so that no id is reused
        self._stdlib = _stdlib_dirs()
        self.project = _project  # the project's folder; None until the first frame that may be its
        call = torch.nn.Module._call_impl.__code__
        inner = [c for c in call.co_consts if getattr(c, "co_name", None) == "inner"]
        self.module_call = {id(code) for code in (call, *inner, torch.nn.Module._wrapped_call_impl.__code__)}

    def user_frame(self, frame):
        """The first USER frame from `frame` up, or None when the call was made inside a library
        module's forward, an optimizer, or nowhere in user code."""
        kinds = self.kinds
        while frame is not None:
            code = frame.f_code
            kind = kinds.get(id(code))
            if kind is None:
                kind = self._classify(frame)
            if kind == USER:
                return frame
            if kind == BARRIER:
                return None
            frame = frame.f_back
        return None

    def module_caller(self, frame):
        """For a forward hook called from `frame`: the user frame that called the module, past the
        module's own call machinery; None when another library module or an optimizer called it."""
        while frame is not None and id(frame.f_code) in self.module_call:
            frame = frame.f_back
        return self.user_frame(frame)

    def user_stack(self, frame, limit: int = 8) -> str:
        """The user frames from `frame` up, innermost first: the report's Call Stack column. It ends
        where torchport's own frames begin (`torchport shapes` running the script)."""
        parts = []
        while frame is not None and len(parts) < limit:
            kind = self.kind(frame)
            if kind == USER:
                parts.append(f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno} in {frame.f_code.co_name}")
            elif parts and (frame.f_globals.get("__name__") or "").startswith("torchport."):
                break
            frame = frame.f_back
        return " <- ".join(parts)

    def kind(self, frame) -> int:
        kind = self.kinds.get(id(frame.f_code))
        return self._classify(frame) if kind is None else kind

    def _classify(self, frame) -> int:
        code = frame.f_code
        kind = self._kind_of(code, frame.f_globals.get("__name__") or "")
        self._codes.append(code)
        self.kinds[id(code)] = kind
        return kind

    def _kind_of(self, code, name: str) -> int:
        """USER, PASS or BARRIER for a frame running `code` in the module `name` (asked once a code)."""
        if id(code) in self.module_call or name == "torch.optim" or name.startswith("torch.optim."):
            return BARRIER
        if name.partition(".")[0] in _INTERNAL_PACKAGES or self._is_stdlib(code.co_filename):
            return PASS
        return USER if self.in_project(code.co_filename) else PASS

    def in_project(self, filename: str) -> bool:
        """Whether a file is the project's (the first file asked about decides the project, when
        none was given: it is the wrapped loop's)."""
        if filename.startswith("<"):
            return True
        path = os.path.realpath(filename)  # (a symlinked checkout is still the project)
        if self.project is None:
            self.project = _found_project(path)
        root = os.path.join(self.project, "")
        if not path.startswith(root):
            return False
        return not any(part in _INSTALLED for part in path[len(root):].split(os.sep))

    def _is_stdlib(self, filename: str) -> bool:
        if filename.startswith("<frozen"):
            return True
        return filename.startswith(self._stdlib) and "-packages" not in filename


def project_of(path: str) -> str:
    """The project of a file: the nearest folder above it with a marker, else the file's folder."""
    own = folder = os.path.dirname(os.path.realpath(path))
    while not any(os.path.exists(os.path.join(folder, marker)) for marker in MARKERS):
        parent = os.path.dirname(folder)
        if parent == folder:
            return own
        folder = parent
    return folder


def _found_project(loop_file: str) -> str:
    """The project of the script python runs when the loop's file is inside it, else the loop's."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main:
        folder = project_of(main)
        if loop_file.startswith(os.path.join(folder, "")):
            return folder
    return project_of(loop_file)


def position(frame) -> tuple[int, int]:
    """(line, column), both from 1, of the instruction `frame` is running: two calls on one line
    are two call sites, as Ascend's per-line call numbers make them."""
    code, index = frame.f_code, frame.f_lasti // 2
    positions = getattr(code, "co_positions", None)
    if positions is not None and index >= 0:
        for number, (line, _, col, _) in enumerate(positions()):
            if number == index:
                if line is not None:
                    return line, (col or 0) + 1
                break
    return frame.f_lineno, 1


def display_path(filename: str) -> str:
    """A path as the report writes it: relative to the working directory when inside it."""
    if filename.startswith("<"):
        return filename
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if relative.startswith("..") else relative
