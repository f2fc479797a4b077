"""`import apex` where no apex is installed: torchport's stand-in (torchport.compat.apex) is served
as `apex`, `apex.amp`, `apex.optimizers`, ... through a meta path finder; a real apex (any the
other finders find) is left alone. Each served module is logged at the script's import line;
the stand-in logs each apex call it answers (see torchport.compat.apex._log).

The served modules are the stand-in's own objects (`apex.amp is torchport.compat.apex.amp`), so a
module imported either way holds the same state; undo() takes them out of sys.modules again.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from torchport.apis.apex import APEX, COMPAT
from torchport.runtime.callers import top_package
from torchport.targets.verdict import Kind, Verdict

ORDER = 70  # after patch_streams, before patch_compilers (it replaces nothing of torch)
_PASSED = ("importlib", "torch", "torchport", "")  # frames between the script's import and the finder


def install(session) -> None:
    finder = ApexFinder(session)
    sys.meta_path.insert(0, finder)  # (first: the path finder would load a second copy of a submodule)
    session.book.on_restore(finder.remove)


class ApexFinder(importlib.abc.MetaPathFinder):
    def __init__(self, session) -> None:
        self.session = session
        self.served: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != APEX and not fullname.startswith(f"{APEX}."):
            return None
        if fullname == APEX:
            if self._found_elsewhere(fullname, path, target):
                return None  # a real apex
        elif sys.modules.get(APEX) is not sys.modules.get(COMPAT):
            return None  # a submodule of a real apex
        module = _stand_in(COMPAT + fullname[len(APEX):])
        if module is None:
            return None
        self.served.add(fullname)
        self._note(fullname, module.__name__)
        return importlib.util.spec_from_loader(fullname, _Served(module))

    def _found_elsewhere(self, fullname, path, target) -> bool:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is not self and find is not None and find(fullname, path, target) is not None:
                return True
        return False

    def _note(self, fullname: str, replacement: str) -> None:
        frame = sys._getframe(1)
        while frame.f_back is not None and top_package(frame) in _PASSED:
            frame = frame.f_back
        verdict = Verdict(f"import {fullname}", Kind.ADAPTED, replacement,
                          "apex is not installed: its API on torch.amp, torchport.optim and torch DDP")
        self.session.log.note_frame(verdict, frame)

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for name in self.served:
            module = sys.modules.get(name)
            if module is not None and module.__name__.startswith(COMPAT):
                del sys.modules[name]


def _stand_in(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
            return None  # apex has more than the stand-in (apex.contrib): `import` fails as without apex
        raise


class _Served(importlib.abc.Loader):
    """Hands the stand-in's module object over as it is (its own __spec__ kept)."""

    def __init__(self, module) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # (the import system set it to the served name's)
