"""`torchport run` on code from before Python 3.7 (`x.cuda(async=True)`, PyTorch before 0.4): the
script and the project's own modules are run with async= renamed non_blocking= in memory, as
migrate's TP024 writes it; nothing is written next to them."""

from __future__ import annotations

import sys

import pytest

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


@pytest.mark.fidelity  # (run -m of a module: the script case above is make test's)
def test_a_pre37_module_runs_with_dash_m(tmp_path, run_tool):
    _project(tmp_path)
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "run.log", "-m", "train"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("STEP") == 3


@pytest.mark.fidelity  # (a third project run: make test keeps the two above)
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


METERS = """def precision(output, target):
    correct = output.argmax(1).eq(target).float().sum(0)
    return [correct.mul_(100.0 / target.size(0))]


def number(value):
    return value.data[0]
"""
TRAIN_03 = """from __future__ import print_function
import torch
import torch.nn as nn
from torch.autograd import Variable
from meters import precision, number

torch.manual_seed(0)
model = nn.Linear(3, 2).cuda()
criterion = nn.CrossEntropyLoss().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch = [torch.randn(4, 3), torch.tensor([0, 1, 0, 1])]
for step in range(2):
    inputs, targets = batch[0].cuda(), batch[1].cuda(async=True)
    output = model(Variable(inputs))
    loss = criterion(output, Variable(targets))
    prec1 = precision(output.data, targets)[0]
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("STEP", step, type(loss.data[0]).__name__, type(prec1[0]).__name__, type(number(loss)).__name__,
          round(loss.data[0], 4) == round(loss.item(), 4), inputs[0].shape, {0: "key"}[0], "ab"[0])
"""


@pytest.mark.fidelity  # (one more pre-3.7 project run)
def test_one_element_results_are_read_as_pytorch_03_read_them(tmp_path, run_tool):
    """(a PyTorch 0.3 trainer: `loss.data[0]` and `prec1[0]` of a result with no dimension give
    its number, in the script and in a module of its own that reads `.data[0]`; any other [0]
    is what it was)"""
    (tmp_path / "meters.py").write_text(METERS)
    (tmp_path / "train.py").write_text(TRAIN_03)
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "run.log", "train.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("STEP")] == [
        f"STEP {step} float float float True torch.Size([3]) key a" for step in range(2)]
    log = (tmp_path / "run.log").read_text()
    for site in ("train.py:16", "train.py:20", "train.py:21", "meters.py:7"):  # (train.py:16 takes a list's [0])
        assert (f"{site}  x[0] -> x.item() [adapted]" in log) == (site != "train.py:16"), log
    assert "x[0]: 3 sites" in log  # (once a line: not for the list, the inputs' row, the dict or the string)
    assert (tmp_path / "meters.py").read_text() == METERS


@pytest.mark.fidelity  # (one more pre-3.7 project run)
def test_a_script_that_compiles_and_reads_data_0_runs_too(tmp_path, run_tool):
    (tmp_path / "train.py").write_text(
        "import torch\nloss = torch.nn.functional.mse_loss(torch.ones(2).cuda(), torch.zeros(2))\n"
        "print('LOSS', loss.data[0])\n")
    result = run_tool(["torchport", "run", "--target", "cpu", "train.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "LOSS 1.0" in result.stdout
