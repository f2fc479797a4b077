"""Act on a module of torch's when the script imports it, not before: some cost a second to import
(torch.distributed.fsdp), and Dynamo must be imported with the patches suspended."""

from __future__ import annotations

import importlib.util
import sys


def after_import(name: str, patch, book) -> None:
    """Call `patch(module)` once `name` is imported: now if it is already, else right after the
    import executes it."""
    if name in sys.modules:
        patch(sys.modules[name])
        return

    def then_patch(execute, module) -> None:
        execute()
        patch(module)

    hook_import(name, then_patch, book)


def hook_import(name: str, around, book) -> None:
    """The next import of `name` executes the module through `around(execute, module)`, where
    `execute()` runs it; the waiting finder goes with the book's other patches."""
    finder = _Waiting(name, around)
    sys.meta_path.insert(0, finder)
    book.on_restore(lambda: sys.meta_path.remove(finder) if finder in sys.meta_path else None)


class _Waiting:
    """A meta path finder that hands `name`'s import to the real finders, with a loader that runs
    it through `around`; then steps aside."""

    def __init__(self, name: str, around) -> None:
        self.name, self.around = name, around

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # the real finders find it; and once is enough
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _AroundLoader(spec.loader, self.around)
        return spec


class _AroundLoader:
    def __init__(self, loader, around) -> None:
        self.loader, self.around = loader, around

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.around(lambda: self.loader.exec_module(module), module)

    def __getattr__(self, name):  # get_source, is_package, ... for tools that ask
        return getattr(self.loader, name)
