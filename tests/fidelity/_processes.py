"""Running a project's command for the fidelity tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def execute(command: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> subprocess.CompletedProcess:
    """Run a command; a run past `timeout_s` comes back as a failed run (status 124), not as an
    error, stopped by SIGTERM first: torchrun then stops its workers (each in a session of its own,
    which a SIGKILL to torchrun would leave running, waiting for their group)."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            stdout, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, _ = process.communicate()
        return subprocess.CompletedProcess(command, 124, stdout, f"timed out after {timeout_s} s")
