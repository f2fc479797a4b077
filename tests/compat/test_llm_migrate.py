"""LLM-era scripts after `torchport migrate` (TP029): flash-attn, xformers and bitsandbytes imports
become torchport's stand-ins, and the output runs on this CPU with the losses of the same model
written by hand with SDPA and torch.optim, on cpu and accelerator; the npu output imports none of
the CUDA-only packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fidelity  # whole pattern projects trained in every mode: make fidelity

SCRIPTS = Path(__file__).resolve().parent / "scripts"
PAIRS = [("llm_flash_bnb_train.py", "llm_sdpa_train.py"), ("diffusion_xformers_train.py", "diffusion_sdpa_train.py"),
         ("packed_varlen_train.py", "packed_sdpa_train.py")]
CUDA_ONLY = {"flash_attn", "xformers", "bitsandbytes"}


def losses(text: str) -> list[float]:
    return [float(line.split()[-1]) for line in text.splitlines() if line.startswith("step ")]


def imported(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.fixture(scope="module")
def references():
    return {by_hand: losses(subprocess.run([sys.executable, SCRIPTS / by_hand], capture_output=True, text=True,
                                           check=True).stdout) for _, by_hand in PAIRS}


# (one in the unit suite; the other five are whole-script runs: fidelity)
RUNS = [pytest.param(target, script, by_hand, id=f"{target}-{name}",
                     marks=() if (target, name) == ("cpu", "flash-attn and bitsandbytes") else pytest.mark.fidelity)
        for target in ("cpu", "accelerator")
        for (script, by_hand), name in zip(PAIRS, ["flash-attn and bitsandbytes", "xformers", "varlen"])]


@pytest.mark.parametrize("target,script,by_hand", RUNS)
def test_the_migrated_script_runs_with_the_losses_of_the_model_written_by_hand(torchport, tmp_path, references,
                                                                               target, script, by_hand):
    result = torchport("migrate", "-q", "--target", target, "-o", tmp_path / "out", SCRIPTS / script)
    assert result.returncode == 0, result.stderr
    migrated = tmp_path / "out" / script
    if target == "cpu":
        assert not imported(migrated.read_text()) & CUDA_ONLY
    run = subprocess.run([sys.executable, migrated], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    got, expected = losses(run.stdout), references[by_hand]
    assert len(got) == len(expected) == 6
    assert all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(got, expected)), (got, expected)


@pytest.mark.parametrize("script", [script for script, _ in PAIRS])
def test_the_npu_output_imports_no_cuda_only_package(torchport, tmp_path, script):
    result = torchport("migrate", "-q", "--target", "npu", "-o", tmp_path / "out", SCRIPTS / script)
    assert result.returncode == 0, result.stderr
    assert not imported((tmp_path / "out" / script).read_text()) & CUDA_ONLY


@pytest.mark.fidelity  # a whole script: migrate, then torchport run
def test_the_npu_output_runs_with_npu_fusion_attention_and_the_losses_by_hand(torchport, tmp_path, references):
    """(on this CPU under `torchport run`, which serves its torch_npu stand-in: npu_fusion_attention
    as torch_npu documents it, causal sparse_mode 3 included)"""
    script, by_hand = PAIRS[0]
    assert torchport("migrate", "-q", "--target", "npu", "-o", tmp_path / "out", SCRIPTS / script).returncode == 0
    migrated = (tmp_path / "out" / script).read_text()
    assert "torch_npu.npu_fusion_attention(q, k, v, q.shape[2], \"BSND\"" in migrated
    result = torchport("run", "--target", "cpu", "--log", tmp_path / "run.log", tmp_path / "out" / script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    got, expected = losses(result.stdout), references[by_hand]
    assert len(got) == 6 and all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(got, expected)), (got, expected)
