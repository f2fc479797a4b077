"""`torchport run` on code from before Python 3.7 (`x.cuda(async=True)`, PyTorch before 0.4): the
script and the project's own modules are run with async= renamed non_blocking= in memory, as
migrate's TP024 writes it; nothing is written next to them."""

from __future__ import annotations

import sys

HELPER = "import torch\n\n\ndef to_device(x):\n    return x.cuda(async=True)\n"
TRAIN = """import torch
import torch.nn as nn
from helpers import to_device

torch.manual_seed(0)
model = nn.Linear(3, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = to_device(torch.randn(4, 3))
    y = torch.tensor([0, 1, 0, 1]).cuda(async=True)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("STEP", step, x.device, y.device)
"""


def _project(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(TRAIN)


def test_an_unmodified_pre37_trainer_and_its_own_module_run(tmp_path, run_tool):
    _project(tmp_path)
    plain = run_tool([sys.executable, "train.py"], tmp_path)
    assert plain.returncode != 0 and "SyntaxError" in plain.stderr  # (what python itself says of it)
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "run.log", "train.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("STEP")] == [
        f"STEP {step} cpu cpu" for step in range(3)]
    log = (tmp_path / "run.log").read_text()
    assert "train.py:10  async= -> non_blocking= [adapted]" in log
    assert "helpers.py:5  async= -> non_blocking= [adapted]" in log
    assert (tmp_path / "helpers.py").read_text() == HELPER  # nothing rewritten on disk
    assert not (tmp_path / "__pycache__").exists()  # nor a bytecode cache of the renamed module


def test_a_pre37_module_runs_with_dash_m(tmp_path, run_tool):
    _project(tmp_path)
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "run.log", "-m", "train"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("STEP") == 3


def test_a_module_outside_the_project_is_not_renamed(tmp_path, run_tool):
    """(only the project's own modules: one elsewhere on the path fails as python would have it)"""
    project, elsewhere = tmp_path / "project", tmp_path / "site"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "helpers.py").write_text(HELPER)
    (project / "train.py").write_text(TRAIN)
    result = run_tool(["torchport", "run", "--target", "cpu", "train.py"], project, env={"PYTHONPATH": str(elsewhere)})
    assert result.returncode == 1 and "SyntaxError" in result.stderr


def test_an_uncaught_error_in_a_renamed_script_is_reported_from_the_scripts_own_frame(tmp_path, run_tool):
    (tmp_path / "train.py").write_text("import torch\n\nx = torch.zeros(2).cuda(async=True)\nraise ValueError('no data')\n")
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "run.log", "train.py"], tmp_path)
    assert result.returncode == 1
    traceback = result.stderr.split("Traceback (most recent call last):\n")[-1].splitlines()
    assert traceback[:3] == ['  File "train.py", line 4, in <module>', "    raise ValueError('no data')",
                             "ValueError: no data"], result.stderr
