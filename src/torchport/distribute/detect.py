"""Which files --distributed changes, and what it must know of one before the steps run.

A file is changed when it is a training entry script (it runs as a program: a `__main__` guard,
or statements at its top level that train) and is not distributed already. Already distributed:
it starts a process group itself, wraps a model in DDP, or reads the launcher's rank
(`LOCAL_RANK`, `--local_rank`); such a file is left alone (a TP200 row says why), except for its
`mp.spawn`, which becomes one process per device under the launcher (spawn.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchport.distribute.changes import Change


@dataclass
class Plan:
    entry: bool = False  # a training entry script
    already: str = ""  # why the file counts as distributed already ("" when it does not)
    spawns: bool = False  # it starts its processes with mp.spawn / start_processes
    main_guard: bool = False  # it has `if __name__ == "__main__":` (the setup goes at its top)
    notes: list[Change] = field(default_factory=list)  # rows about the file as a whole (TP200)

    @property
    def to_distribute(self) -> bool:
        return self.entry and (not self.already or self.spawns)


def read(module: cst.Module, options) -> Plan:
    """What the steps need to know of `module` (`options.entry` overrides the entry guess)."""
    # TODO(H2a): entry detection, already-distributed detection, spawns, main guard, TP200 notes.
    return Plan(entry=bool(options.entry), main_guard=False)
