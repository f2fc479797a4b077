"""An unmodified apex script runs under `torchport run --target cpu`, and the log lists its apex uses."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "scripts" / "apex_train.py"


@pytest.mark.fidelity
def test_an_unmodified_apex_script_runs_under_torchport_run_and_its_uses_are_logged(torchport, tmp_path):
    result = torchport("run", "--target", "cpu", "--log", tmp_path / "run.log", SCRIPT, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("loss ") and "scale 65536.0" in result.stdout
    logged = {line.split("  ", 1)[1].split(" ->")[0] for line in (tmp_path / "run.log").read_text().splitlines()
              if not line.startswith("#")}
    assert {"import apex", "import apex.optimizers", "import apex.parallel", "apex.parallel.convert_syncbn_model",
            "apex.optimizers.FusedAdam", "apex.amp.initialize", "apex.amp.scale_loss", "apex.amp.master_params",
            "optimizer.step() after amp.initialize", "apex.amp.state_dict", "apex.amp.load_state_dict"} <= logged
