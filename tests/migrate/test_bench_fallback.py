"""bench/fallback.py runs end to end (a smoke run: the timings themselves are not judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fidelity  # (a whole benchmark run: in make fidelity, with the other end-to-end runs)

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fallback.py"


def test_both_cases_compare_outputs_that_do_the_same_work():
    done = subprocess.run([sys.executable, str(BENCH), "--rounds", "1", "--steps", "1", "--warmup", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    cases = [line for line in lines if line.startswith(("this host ", "no native bf16 "))]
    assert len(cases) == 2 and all("ratio " in line and "UNEQUAL" not in line for line in cases), lines
    assert "native bf16 no  | autocast: cpu output off, accelerator output off" in cases[1]
    assert lines[-1].startswith("worst ratio accelerator / cpu ")
