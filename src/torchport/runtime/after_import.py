"""Patch a module of torch's when the script imports it, not before: some cost a second to import
(torch.distributed.fsdp), and most scripts never do."""

from __future__ import annotations

import importlib.util
import sys


def after_import(name: str, patch, book) -> None:
    """Call `patch(module)` once `name` is imported: now if it is already, else right after the
    import executes it. The waiting finder goes with the book's other patches."""
    if name in sys.modules:
        patch(sys.modules[name])
        return
    finder = _Waiting(name, patch)
    sys.meta_path.insert(0, finder)
    book.on_restore(lambda: finder in sys.meta_path and sys.meta_path.remove(finder))


class _Waiting:
    """A meta path finder that hands `name`'s import to the real finders and patches the module
    after it runs; then steps aside."""

    def __init__(self, name: str, patch) -> None:
        self.name, self.patch = name, patch

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, self.patch)
        return spec


class _PatchingLoader:
    def __init__(self, loader, patch) -> None:
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name):  # get_source, is_package, ... for tools that ask
        return getattr(self.loader, name)
