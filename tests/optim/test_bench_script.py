"""bench/optim.py runs end to end (a smoke run: the timings themselves are not judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "optim.py"


def _bench(*args):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.fidelity  # (a whole benchmark run: in make fidelity, with the other end-to-end runs)
def test_repeat_prints_each_run_and_the_spread():
    done = _bench("--only", "SGD,RMSprop", "--case", "b", "--rounds", "1", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sum(line.startswith("--- run ") for line in lines) == 2
    rows = [line for line in lines if line.startswith(("SGD ", "RMSprop "))]
    assert len(rows) == 2 * 2 + 2  # a row per run and optimizer, then one spread line each
    spread = rows[-2:]
    assert all("met in" in line and line.count("x /") == 2 for line in spread)


def test_an_absent_device_is_a_one_line_error():
    done = _bench("--device", "cuda:7", "--only", "SGD")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("optim.py: error: --device cuda:7")
    assert "Traceback" not in done.stderr


@pytest.mark.fidelity
@pytest.mark.parametrize("mode, timed", [("fresh", "zero_grad() + step() with fresh grads"),
                                         ("zeroed", "zero_grad(set_to_none=False) + step()")])
def test_grads_modes_time_zero_grad_and_step(mode, timed):
    done = _bench("--grads", mode, "--only", "Adam", "--case", "b", "--rounds", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert timed in lines[0]
    (row,) = [line for line in lines if line.startswith("Adam ")]
    assert row.endswith(" -")  # the goals are for --grads kept: not judged here
    assert not any("goal(s) missed" in line for line in lines)
