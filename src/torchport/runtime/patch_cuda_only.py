"""An import of a CUDA-only package that nothing serves (`flash_attn_2_cuda`, `triton`,
`mamba_ssm`, a submodule of flash_attn the stand-in lacks, ...) fails with one line that says what
to do (apis/kernels_llm.NO_STAND_IN), not a bare ModuleNotFoundError.

A meta path finder placed last: the import system asks it only when every other finder (the
stand-ins' included) has found nothing. It raises runtime.NoStandIn (a ModuleNotFoundError, so a
script's `except ImportError` fallback still runs), logged as unsupported at the script's import
line; `torchport run` reports it uncaught as one line. It stays silent (the plain error) for
names it does not know, for importlib.util.find_spec probes (which must answer None, not raise),
and for imports made by libraries that probe the hardware (`session.honest`: torch looks for triton)."""

from __future__ import annotations

import importlib.abc
import sys

from torchport.apis.kernels_llm import no_stand_in_advice
from torchport.runtime.callers import top_package
from torchport.runtime.stand_in import _importer
from torchport.targets.verdict import Kind, Verdict

ORDER = 90  # after the stand-ins (its place in sys.meta_path is last whatever the order), before patch_compilers
_IMPORTING = "_find_and_load_unlocked"  # importlib's frame for an import statement or import_module


class NoStandInFinder(importlib.abc.MetaPathFinder):
    def __init__(self, session) -> None:
        self.session = session

    def install(self) -> "NoStandInFinder":
        sys.meta_path.append(self)
        self.session.book.on_restore(self.remove)
        return self

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(self, fullname, path=None, target=None):
        advice = no_stand_in_advice(fullname)
        if advice is None or not _importing() or self._found_after(fullname, path, target):
            return None
        if top_package(_direct_importer()) in self.session.honest:
            return None  # (torch looking for triton: the plain error, which it expects)
        importer = _importer()
        from torchport.runtime import NoStandIn

        self.session.log.note_frame(Verdict(f"import {fullname}", Kind.UNSUPPORTED, None, advice), importer)
        raise NoStandIn(f"No module named {fullname!r}: torchport has no stand-in for it; {advice}", name=fullname)

    def _found_after(self, fullname, path, target) -> bool:
        """Whether a finder added after this one finds the module (it is installed after all)."""
        finders = sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []
        return any(getattr(finder, "find_spec", None) is not None and finder.find_spec(fullname, path, target)
                   for finder in finders)


def _importing() -> bool:
    """Whether the import system asks in order to import (not importlib.util.find_spec probing)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        if frame.f_code.co_name == _IMPORTING:
            return True
        frame = frame.f_back
    return False


def _direct_importer():
    """The first frame above the import system's: who asked (torch, a library, the script)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and top_package(frame) in ("importlib", "torchport", ""):
        frame = frame.f_back
    return frame


def install(session) -> None:
    NoStandInFinder(session).install()
