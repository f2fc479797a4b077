"""Unmodified LLM-era scripts run under `torchport run --target cpu`: a nanoGPT/litgpt-style one
with flash-attn, fused RMSNorm, rotary and an 8-bit AdamW, a diffusion-style one with xformers and a
packed-sequence one with flash-attn's varlen attention,
each with the losses of the same model written by hand with SDPA and torch.optim."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fidelity  # whole pattern projects trained in every mode: make fidelity

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def losses(text: str) -> list[float]:
    return [float(line.split()[-1]) for line in text.splitlines() if line.startswith("step ")]


@pytest.mark.parametrize("script,by_hand,uses", [
    ("llm_flash_bnb_train.py", "llm_sdpa_train.py",
     {"import flash_attn", "flash_attn.flash_attn_func", "flash_attn.ops.rms_norm.RMSNorm",
      "flash_attn.layers.rotary.apply_rotary_emb", "import bitsandbytes", "bitsandbytes.optim.AdamW8bit"}),
    ("diffusion_xformers_train.py", "diffusion_sdpa_train.py",
     {"import xformers.ops", "xformers.ops.memory_efficient_attention", "xformers.ops.SwiGLU"}),
    pytest.param("packed_varlen_train.py", "packed_sdpa_train.py", {"import flash_attn", "flash_attn.flash_attn_varlen_func"},
                 marks=pytest.mark.fidelity),
], ids=["flash-attn and bitsandbytes", "xformers", "varlen"])
def test_the_script_runs_with_the_losses_of_the_model_written_by_hand(torchport, tmp_path, script, by_hand, uses):
    result = torchport("run", "--target", "cpu", "--log", tmp_path / "run.log", SCRIPTS / script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    reference = subprocess.run([sys.executable, SCRIPTS / by_hand], capture_output=True, text=True, check=True)
    got, expected = losses(result.stdout), losses(reference.stdout)
    assert len(got) == len(expected) == 6
    assert all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(got, expected)), (got, expected)
    logged = {line.split("  ", 1)[1].split(" ->")[0] for line in (tmp_path / "run.log").read_text().splitlines()
              if not line.startswith("#")}
    assert uses <= logged
