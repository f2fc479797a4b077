"""Fixtures shared by the test packages: the `torchport` command, in-process and as a process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m torchport.cli`."""
    script = Path(sys.executable).with_name("torchport")
    if script.exists():
        return [str(script)]
    found = shutil.which("torchport")
    return [found] if found else [sys.executable, "-m", "torchport.cli"]


@pytest.fixture
def torchport():
    """Run `torchport ARGS...` as a separate process: returns the CompletedProcess (text)."""

    def run(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*_command(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout
        )

    return run


@pytest.fixture
def cli(capsys):
    """Run `torchport.cli.main(ARGS)` in this process: returns (exit status, stdout, stderr)."""
    from torchport.cli import main

    def run(*args) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = main([str(a) for a in args])
        except SystemExit as exit_:  # argparse
            status = exit_.code
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def save_on_gpu():
    """`save_on_gpu(obj, path)`: torch.save as a GPU run saves, every storage tagged "cuda:0"
    (what torch.load restores it onto), written here without a GPU."""
    return save_as_if_on_gpu


def save_as_if_on_gpu(obj, path) -> None:
    """torch.save(obj, path) with the location tag a CUDA storage gets: torch.save reads each
    storage's tag from torch.serialization.location_tag, answered here for a GPU."""
    from unittest import mock

    import torch.serialization

    with mock.patch.object(torch.serialization, "location_tag", lambda storage: "cuda:0"):
        torch.save(obj, path)
