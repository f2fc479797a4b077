"""What a target's launcher (`run_distributed.sh`, written by `migrate --distributed`) needs to
know of it: how many processes one machine starts, and what the target's own launch scripts set."""

from __future__ import annotations

from dataclasses import dataclass

# Processes per machine where there is no device to count (the CPU): two, so that a run is
# distributed at all; NPROC_PER_NODE says otherwise.
HOST_PROCESSES = 2


@dataclass(frozen=True)
class Setting:
    """An environment variable the launcher exports, unless it is set already."""

    name: str
    default: str
    meaning: str


@dataclass(frozen=True)
class Launch:
    # An expression for the devices of this machine (after `import torch` and the target's
    # setup import), the processes it starts; None: nothing to count, HOST_PROCESSES.
    count: str | None = None
    settings: tuple[Setting, ...] = ()
    # Each process bound to its share of the CPU cores (taskset), as the vendor's launchers do.
    bind_cores: bool = False
