"""Targets that other packages ship, found through the entry-point group `torchport.targets`.

A vendor's package holds one module with `TARGET = Target(...)` (from torchport.targets: its
device type, device module, surface, backend, ...; it may build on torchport's own target modules
and fallbacks, but not ask `targets.get()`, which is what is loading it) and declares it in its
pyproject.toml:

    [project.entry-points."torchport.targets"]
    musa = "torchport_musa:TARGET"      # a Target object, or a module that defines TARGET

Optional data travel in the package's own data/ folder: a surface read with
`surface.names(file, module, package="torchport_musa")`, kernel lists named by
`Kernels(own_data=file, data_package="torchport_musa")`. Every torchport command knows the
target once the package is installed. One that fails to load (an import error, a Target that
refuses its own fields, a name torchport already has) is left out with one line on stderr naming
the entry point: the other targets still work.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

GROUP = "torchport.targets"


class BrokenTarget(Exception):
    """An entry point of the group that gives no usable Target (the message says why)."""


def installed(taken: set[str]) -> list[tuple[object, str]]:
    """(Target, where it comes from) for each entry point of the group that loads, in the order
    of their names; `taken` are the names already used (torchport's own targets)."""
    found = []
    for entry in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        try:
            target = load(entry, taken)
        except BrokenTarget as error:
            print(f"torchport: {error}", file=sys.stderr)
            continue
        taken.add(target.name)
        found.append((target, origin(entry)))
    return found


def load(entry: EntryPoint, taken: set[str]):
    """The Target that `entry` names, or BrokenTarget saying why there is none."""
    from torchport.targets.base import Target

    where = f"target entry point {entry.name} = {entry.value} ({origin(entry)})"
    try:
        loaded = entry.load()
    except Exception as error:  # (any error of someone else's code: said in one line, never a traceback)
        raise BrokenTarget(f"{where} is left out: {_one_line(error)}") from None
    target = loaded if isinstance(loaded, Target) else getattr(loaded, "TARGET", None)
    if not isinstance(target, Target):
        raise BrokenTarget(f"{where} is left out: it names {type(loaded).__name__} {getattr(loaded, '__name__', '')!s}"
                           .rstrip() + ", not a torchport Target nor a module with TARGET")
    if target.name in taken:
        raise BrokenTarget(f"{where} is left out: a target named {target.name} exists already")
    return target


def origin(entry: EntryPoint) -> str:
    """The distribution an entry point comes from: `foo-target 0.1`."""
    dist = getattr(entry, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unknown distribution"


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
