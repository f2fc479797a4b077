"""Fixtures shared by the test packages: the `torchport` command, in-process and as a process,
and the CPU's bfloat16 support, which no test reads from the host."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "cpu_bf16"))
import native_bf16  # noqa: E402  (tests/cpu_bf16: what torch.cpu.get_capabilities says here)


def pytest_configure(config):
    """Whether the CPU computes bfloat16 natively decides whether autocast stays on (targets/cpu.py),
    and CI runs on other CPUs than this one. So every test, and every Python process it starts,
    sees a CPU without native bfloat16 (SIMULATE_NATIVE_BF16=1 or 0 in the environment says
    otherwise); a test whose outcome depends on it sets it with `cpu_bf16`, both ways."""
    native = native_bf16.requested()
    native = False if native is None else native
    os.environ.update(native_bf16.environment(native))
    native_bf16.force(native)


@pytest.fixture
def cpu_bf16(monkeypatch):
    """cpu_bf16(native): for the rest of the test, torch here and in the processes the test starts
    says the CPU does (True) or does not (False) compute bfloat16 natively."""
    import torch

    def set_native(native: bool) -> None:
        monkeypatch.setenv(native_bf16.ENV, "1" if native else "0")
        monkeypatch.setattr(torch.cpu, "get_capabilities", native_bf16.forced(torch.cpu.get_capabilities, native))

    return set_native


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


@pytest.fixture(autouse=True)
def _excepthook_restored():
    """torch's init_process_group installs a sys.excepthook that prefixes every line of a traceback
    with "[rank0]: ", and destroy_process_group leaves it: a test that starts a group in this
    process would change how every later test's script fails (`run` prints tracebacks through it)."""
    hook = sys.excepthook
    yield
    sys.excepthook = hook
