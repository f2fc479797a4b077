"""bench/gpu.sh, the GPU check: on a machine without CUDA it says so and succeeds; its step timer
times any script without changing what it does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_gpu_check_says_there_is_no_cuda_device_and_exits_0():
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu.sh")], env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout.strip().splitlines() == [
        f"bench/gpu.sh: no CUDA device here (torch.cuda.is_available() is False for {sys.executable}): nothing to check"]


@pytest.mark.fidelity  # bench/gpu.sh's step timer around a real training script: make fidelity
def test_the_step_timer_counts_every_optimizer_step_and_keeps_the_scripts_output_and_exit(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, torch\n"
        "model = torch.nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    opt.zero_grad(); model(torch.ones(1, 2)).sum().backward(); opt.step()\n"
        "print('FINAL done')\n"
        "sys.exit(3)\n")
    out = tmp_path / "times.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "step_timer.py"), "--out", str(out), "--skip", "2",
                           str(script), "7"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3 and done.stdout.splitlines()[-1] == "FINAL done"
    times = json.loads(out.read_text())
    assert times["steps"] == 7 and times["median_ms"] > 0
