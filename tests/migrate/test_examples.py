"""The bundled CUDA examples, migrated to the CPU and to device-agnostic code, run to their final line."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchport.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SINGLE = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name != "ddp_train.py")
TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"


@pytest.fixture(scope="module", params=["cpu", "accelerator"])
def migrated(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"examples_{request.param}")
    assert main(["migrate", str(EXAMPLES), "-o", str(out), "--target", request.param, "--quiet"]) == 0
    return out


def _run(command, cwd):
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.fidelity  # (whole example runs, as make demo does them: in make fidelity, with the pattern projects)
@pytest.mark.parametrize("script", SINGLE)
def test_migrated_example_runs_to_its_final_line(migrated, script):
    done = _run([sys.executable, script], migrated)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("FINAL ")
    code = ast.parse((migrated / script).read_text())
    assert not [n.attr for n in ast.walk(code) if isinstance(n, ast.Attribute) and n.attr == "cuda"]


@pytest.mark.fidelity  # (whole example runs, as make demo does them: in make fidelity, with the pattern projects)
def test_migrated_ddp_example_runs_under_torchrun(migrated):
    done = _run([TORCHRUN, "--standalone", "--nproc_per_node", "2", "ddp_train.py"], migrated)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FINAL example=ddp_train" in done.stdout
    assert "world_size=2" in done.stdout


def test_the_original_examples_need_cuda():
    """The examples really are CUDA code: unmigrated, this CPU machine cannot run them."""
    done = _run([sys.executable, "cnn_benchmark.py"], EXAMPLES)
    assert done.returncode != 0
