"""What torchport knows about each backend. One module per target; each defines `TARGET`.

A new backend is one new module here, or one in another package that names it in the entry-point
group `torchport.targets` (installed.py): the rewriter, the run-time patcher and the analysers all
read targets through `get()` and `all_targets()`.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from torchport.targets import installed
from torchport.targets.base import Target
from torchport.targets.verdict import Kind, Verdict

__all__ = ["Kind", "Target", "Verdict", "all_targets", "auto_order", "get", "names", "origin"]

_NOT_TARGETS = {"command"}  # (a module without `TARGET` is knowledge shared by the targets)
DEFAULT = "npu"  # what `migrate` and `analyze` rewrite for when no --target is given
HOST = "cpu"  # the target with no device: what `--target auto` picks where no device target is available


@lru_cache(maxsize=None)
def all_targets() -> dict[str, Target]:
    """torchport's own targets and the installed ones, in the order they are listed (`rank`)."""
    found = _found()
    return {name: found[name][0] for name in sorted(found, key=lambda name: (found[name][0].rank, name))}


def origin(name: str) -> str | None:
    """The distribution an installed target comes from (`foo-target 0.1`); None for torchport's own."""
    return _found()[name][1]


@lru_cache(maxsize=None)
def _found() -> dict[str, tuple[Target, str | None]]:
    """name -> (Target, the distribution it comes from, None for a module of this package)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in _NOT_TARGETS or info.name.startswith("_"):
            continue
        target = getattr(importlib.import_module(f"{__name__}.{info.name}"), "TARGET", None)
        if isinstance(target, Target):
            found[target.name] = (target, None)
    for target, where in installed.installed(set(found)):
        found[target.name] = (target, where)
    return found


def names() -> list[str]:
    return list(all_targets())


def auto_order() -> list[str]:
    """The device targets `--target auto` tries, in order (the CPU when none is available)."""
    return [name for name, target in all_targets().items() if target.auto]


def get(name: str) -> Target:
    try:
        return all_targets()[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of: {', '.join(names())}") from None
