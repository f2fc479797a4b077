"""bench/distributed.py runs end to end and prints both sides and the goal (a smoke run: timings are not judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "distributed.py"
PROJECTS = Path(__file__).resolve().parents[1] / "fidelity" / "distributed" / "projects"


@pytest.mark.fidelity  # a whole benchmark script's smoke run, as bench/dump.py's
def test_the_bench_prints_both_sides_and_the_goal(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--src", str(PROJECTS), "--rounds", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for fragment in ("5 files under", "plain migrate", "migrate --distributed", "x the plain migration (goal <= 2x)"):
        assert fragment in done.stdout
    assert list(tmp_path.iterdir()) == []
