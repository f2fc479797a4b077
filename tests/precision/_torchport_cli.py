"""`torchport` run as a user runs it, for the dump and compare tests: warnings quiet, and none of
the environment this test process may carry (a target, a precision fault) unless a test sets it."""

from __future__ import annotations

import os
import subprocess
import sys

TORCHPORT = [sys.executable, "-m", "torchport"]


def run(args, cwd, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONWARNINGS": "ignore::UserWarning", **env}
    environment.pop("TORCHPORT_TARGET", None)
    if "PRECISION_FAULT" not in env:
        environment.pop("PRECISION_FAULT", None)
    return subprocess.run([str(a) for a in args], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=300)


class Dumps(dict):
    """Each dump made once, when a test first asks for it (make test asks for fewer than make
    fidelity): `make(name)` makes the dump called `name` and gives its folder."""

    def __init__(self, make) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, name: str):
        self[name] = self.make(name)
        return self[name]
