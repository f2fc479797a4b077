"""The launchers of one `migrate --distributed` run: one beside each entry script it distributed
(run_distributed.sh; run_distributed_<stem>.sh where a folder holds several), each with the
script's own command line, and the row that says where each was written."""

from __future__ import annotations

import posixpath
from collections import Counter

from torchport.distribute import command_line
from torchport.distribute.changes import LAUNCHER
from torchport.distribute.launcher import Launcher, launcher, launcher_name
from torchport.findings import Finding, Operation
from torchport.targets import Target


def plan(scripts: list[str], taken: set[str], texts: dict[str, str], target: Target) -> tuple[list[Launcher], list[Finding]]:
    """A launcher for each of `scripts` (names in the tree), none over a name of `taken` (the
    tree's own files); `texts`: the tree's shell scripts and markdown, by name."""
    per_folder = Counter(posixpath.dirname(script) for script in scripts)
    made, rows, names = [], [], set(taken)
    for script in scripts:
        choices = [launcher_name(script, per_folder[posixpath.dirname(script)] > 1), launcher_name(script, True)]
        name = next((choice for choice in choices if choice not in names), None)
        if name is None:
            rows.append(Finding(script, 0, 0, LAUNCHER.code, Operation.NOTE,
                                f"no launcher written: {choices[0]} and {choices[1]} are files of the project; "
                                "start it with torchrun --nproc_per_node N"))
            continue
        names.add(name)
        made.append(written := launcher(script, target, name, command_line.find(script, texts)))
        found = written.command_line
        origin = f"the command line of {found.where}" if found else "no command line found: add the script's arguments"
        if found and found.placeholders:
            origin += f", whose {' '.join(found.placeholders)} you fill in (it refuses to start until then)"
        rows.append(Finding(name, 1, written.text.count("\n"), LAUNCHER.code, Operation.INSERT,
                            f"launcher for {script}: torchrun, one process per device; {origin}"))
    return made, rows
