"""Code written before Python 3.7 under run: `x.cuda(async=True)` (PyTorch before 0.4) is no valid
Python since `async` became a keyword, so such a script would not even compile. Run renames those
arguments `non_blocking=` in memory, as `migrate` does in the files it writes (TP024,
torchport/async_arguments.py): for the script itself, and, through an import hook, for the
project's own modules (those under the script's folder) that it imports. The same files, and those
that read `loss.data[0]`, get PyTorch 0.3's one-element results back (runtime/legacy_scalars.py).
Nothing is written to disk: a module changed so is compiled from memory and gets no bytecode cache.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

from torchport.async_arguments import NEW, OLD, rename_async_arguments
from torchport.runtime import legacy_scalars
from torchport.runtime.calllog import short_path
from torchport.runtime.main_module import execute
from torchport.syntax import syntax_problem
from torchport.targets.verdict import Kind, Verdict

RENAMED = Verdict(f"{OLD}=", Kind.ADAPTED, f"{NEW}=",
                  f"renamed in memory (PyTorch 0.4 renamed it; {OLD} is a keyword since Python 3.7)")


def renamed_source(path: str) -> bytes | None:
    """The source of `path` with its async= arguments renamed, where that makes it valid Python
    (None: the renaming does not help, or there is nothing to rename)."""
    renamed = _renamed(_read(path), path)
    return renamed[0] if renamed is not None else None


def legacy_source(path: str) -> bytes | None:
    """The source of `path` where it reads PyTorch 0.3's one-element results (`loss.data[0]`),
    to be run through `run_script` (None: it does not)."""
    source = _read(path)
    return source if legacy_scalars.reads_one_element_results(source) else None


def _renamed(source: bytes, path: str) -> tuple[bytes, list[int]] | None:
    """`source` with its async= arguments renamed and the lines renamed, where that makes it valid Python."""
    renamed, lines = rename_async_arguments(source)
    if not lines or syntax_problem(renamed, path) is not None:
        return None
    return renamed, lines


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def install(root: str, log) -> "ProjectFinder":
    """The import hook for the modules under `root`, logging each renamed line to `log`."""
    finder = ProjectFinder(os.path.abspath(root), log)
    sys.meta_path.insert(0, finder)
    return finder


def run_script(script: str, source: bytes, log) -> None:
    """Run `source` (the script's, renamed, or reading `.data[0]`) as
    `runpy.run_path(script, run_name="__main__")` would."""
    _log_lines(log, script, rename_async_arguments(_read(script))[1])
    execute(legacy_scalars.compiled(source, script, log), script)


def _log_lines(log, path: str, lines: list[int]) -> None:
    for line in lines:
        log.note_at(f"{short_path(path)}:{line}", RENAMED)


class ProjectFinder(importlib.abc.MetaPathFinder):
    """Finds the project's own modules as the path finder does, with a loader that renames async=
    and reads one-element results as PyTorch 0.3 did."""

    def __init__(self, root: str, log) -> None:
        self.root = root + os.sep
        self.log = log

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if (origin is None or not origin.endswith(".py") or not os.path.abspath(origin).startswith(self.root)
                or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)):
            return None
        spec.loader = _RenamingLoader(spec.loader.name, spec.loader.path, self.log)
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


class _RenamingLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, log) -> None:
        super().__init__(fullname, path)
        self.log = log

    def get_code(self, fullname):
        source = _read(self.path)  # (once; a module left as it is goes to the path loader and its bytecode cache)
        renamed = _renamed(source, self.path)
        if renamed is not None:
            source, lines = renamed
            _log_lines(self.log, self.path, lines)
        elif not legacy_scalars.reads_one_element_results(source):
            return super().get_code(fullname)
        return legacy_scalars.compiled(source, self.path, self.log)
