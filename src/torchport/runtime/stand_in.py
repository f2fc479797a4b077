"""A stand-in package served under a name where no real package of that name exists: `import apex`
gets torchport.compat.apex, `import torch_npu` (and `import torch.npu`) torchport.compat.torch_npu,
through a meta path finder that a patch family installs for the session.

The served modules are the stand-in's own objects (`apex.amp is torchport.compat.apex.amp`), so a
module imported either way holds the same state. A real package (any the other finders find) is
left alone, and so are its submodules; a submodule the stand-in lacks fails to import, as it would
without the package. Each served import is logged at the script's import line; undo() takes the
served entries out of sys.modules again (and the attributes the import system set on a parent).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from torchport.runtime.callers import top_package
from torchport.targets.verdict import Kind, Verdict

_PASSED = ("importlib", "torch", "torchport", "")  # frames between the script's import and the finder


class StandInFinder(importlib.abc.MetaPathFinder):
    """Serves `aliases` (served name -> the stand-in module's name, e.g. "apex" ->
    "torchport.compat.apex") and their submodules.

    `verdict(fullname, stand_in_name)` is what the log says of one served import (None: the
    default line, `adapted` with `why`); `on_serve(fullname, module)` is called after each served
    import. With `decline_honest`, an import made by a package that probes the hardware
    (`session.honest`: accelerate, transformers, ...) is not served: it finds the package
    missing, as it is."""

    def __init__(self, session, aliases: dict[str, str], why: str, verdict=None, on_serve=None,
                 decline_honest: bool = False) -> None:
        self.session = session
        self.aliases = aliases
        self.why = why
        self.verdict = verdict
        self.on_serve = on_serve
        self.decline_honest = decline_honest
        self.served: set[str] = set()

    def install(self) -> "StandInFinder":
        sys.meta_path.insert(0, self)  # (first: the path finder would load a second copy of a submodule)
        self.session.book.on_restore(self.remove)
        return self

    def find_spec(self, fullname, path=None, target=None):
        root = self._root(fullname)
        if root is None:
            return None
        if fullname == root:
            if found_elsewhere(fullname, path, target):
                return None  # a real package
        elif sys.modules.get(root) is not sys.modules.get(self.aliases[root]):
            return None  # a submodule of a real package
        if self.decline_honest and top_package(_importer()) in self.session.honest:
            return None
        module = _stand_in(self.aliases[root] + fullname[len(root):])
        if module is None:
            return None
        self.served.add(fullname)
        return importlib.util.spec_from_loader(fullname, _Served(module, self._loaded))

    def _root(self, fullname: str) -> str | None:
        for alias in self.aliases:
            if fullname == alias or fullname.startswith(f"{alias}."):
                return alias
        return None

    def _loaded(self, fullname: str, module) -> None:
        """Log an import served (at load: `importlib.util.find_spec` alone imports nothing)."""
        verdict = self.verdict(fullname, module.__name__) if self.verdict is not None else None
        if verdict is None:
            verdict = Verdict(f"import {fullname}", Kind.ADAPTED, module.__name__, self.why)
        self.session.log.note_frame(verdict, _importer())
        if self.on_serve is not None:
            self.on_serve(fullname, module)

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for name in sorted(self.served, reverse=True):  # (submodules first)
            module = sys.modules.get(name)
            if module is None or not module.__name__.startswith(tuple(self.aliases.values())):
                continue
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            owner = sys.modules.get(parent)
            if owner is not None and vars(owner).get(child) is module and parent not in self.served:
                delattr(owner, child)  # (`import torch.npu` set torch.npu)


def found_elsewhere(fullname: str, path=None, target=None) -> bool:
    """Whether a finder other than the stand-ins' finds `fullname` (a real package)."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if not isinstance(finder, StandInFinder) and find is not None and find(fullname, path, target) is not None:
            return True
    return False


def _importer():
    """The frame of the import statement (or importlib call) that asked for the module."""
    frame = sys._getframe(1)
    while frame.f_back is not None and top_package(frame) in _PASSED:
        frame = frame.f_back
    return frame


def _stand_in(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
            return None  # the package has more than the stand-in: `import` fails as without it
        raise


class _Served(importlib.abc.Loader):
    """Hands the stand-in's module object over as it is (its own __spec__ kept)."""

    def __init__(self, module, loaded) -> None:
        self.module = module
        self.spec = module.__spec__
        self.loaded = loaded

    def create_module(self, spec):
        self.served_name = spec.name
        return self.module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # (the import system set it to the served name's)
        self.loaded(self.served_name, module)
