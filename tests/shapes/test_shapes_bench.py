"""bench/shapes.py runs end to end and prints its three sides (a smoke run: timings are not judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "shapes.py"


@pytest.mark.fidelity  # a whole benchmark script's smoke run, as bench/fallback.py's and bench/optim.py's
def test_the_bench_prints_each_side_and_both_goals(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--rounds", "1", "--steps", "2", "--warmup", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for fragment in ("plain step", "DETECTOR step", "traceback-hook step", "(goal <= 2)", "(goal >= 5)",
                     "recorded calls per step"):
        assert fragment in out
    assert list(tmp_path.iterdir()) == []  # the bench's detectors leave no report behind
