"""`mp.spawn(fn, args=(...), nprocs=N)` -> `fn(LOCAL_RANK, ...)`: the launcher starts the processes."""

from __future__ import annotations

from torchport.distribute.changes import Change


def launch_in_place(source: str, plan, options) -> tuple[str, list[Change]]:
    return source, []  # TODO
