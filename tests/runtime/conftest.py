"""Fixtures for the run-time patcher: every test that patches torch undoes it afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


@pytest.fixture
def runtime_on(tmp_path):
    """A function that applies the runtime for a target (logging under tmp_path); undone at teardown."""
    from torchport import runtime

    def start(target: str = "cpu", **options):
        options.setdefault("log", str(tmp_path / "torchport_run.log"))
        return runtime.apply(target, **options)

    yield start
    runtime.undo()


@pytest.fixture(scope="session")
def run_tool():
    """A function running a command as a process, with the venv first on PATH and without
    TORCHPORT_TARGET inherited: run_tool(args, cwd, env=None) -> CompletedProcess (text)."""
    return _run_tool


def _run_tool(args, cwd, env=None, timeout=240):
    environment = dict(os.environ)
    environment.pop("TORCHPORT_TARGET", None)
    environment["PATH"] = f"{BIN}{os.pathsep}{environment.get('PATH', '')}"
    environment["PYTHONWARNINGS"] = "ignore::UserWarning"  # torch's "Failed to initialize NumPy"
    environment.update(env or {})
    return subprocess.run(args, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)
