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
