"""`make demo` ends with a command to type next; typed in a fresh shell (no venv active, a bare
PATH) where the demo ran, it works."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.fidelity

ROOT = Path(__file__).resolve().parents[2]


def load_demo():
    spec = importlib.util.spec_from_file_location("demo", ROOT / "tools" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_demos_last_hint_runs_in_a_fresh_shell(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)  # where `make demo` runs it
    hint = load_demo().diff_hint()
    assert hint.split()[0] != "torchport"  # a bare name is on no PATH in a fresh shell
    done = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", f"HOME={tmp_path}", "bash", "-c", hint],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- a/") and "+++ b/" in done.stdout
    assert "nothing written (--diff)" in done.stderr + done.stdout
