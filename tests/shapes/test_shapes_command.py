"""`torchport shapes script.py`: unmodified scripts, their loops found, the report, and bad input.

Most runs are in this process (the command runs the script as __main__ and puts sys back); the run
that patches torch for another target is a process of its own.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import _shapes_scripts as scripts  # noqa: E402

BIN = Path(sys.executable).parent


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Work in tmp_path, so that the report's File Path is the script's name."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _report(directory: Path, name: str = "dynamic_shape_report.csv") -> list[dict]:
    with open(directory / name, newline="") as handle:
        return list(csv.DictReader(handle))


def _sites(table: list[dict], dynamic: str) -> set[tuple[int, str]]:
    return {(int(row["Line Number"]), row["Function Name"]) for row in table if row["Dynamic"] == dynamic}


def _one_line_error(result, *fragments):
    status, out, err = result
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_help_explains_the_loop_the_report_and_the_manual_edit(cli):
    status, out, _ = cli("shapes", "--help")
    assert status == 0
    for fragment in ("--steps", "dynamic_shape_report.csv", "Input Shape Range", "DETECTOR.start(loader)",
                     "--target cpu", "exit status", ".rank<N>"):
        assert fragment in out


def test_bad_input_is_one_line(cli, in_tmp):
    _one_line_error(cli("shapes"), "torchport shapes: error:", "give a script")
    _one_line_error(cli("shapes", "missing.py"), "no such script: missing.py")
    (in_tmp / "broken.py").write_text("for x in :\n    pass\n")
    _one_line_error(cli("shapes", "broken.py"), "broken.py:1: the script does not parse")
    (in_tmp / "infer.py").write_text(scripts.NO_LOOP)
    _one_line_error(cli("shapes", "infer.py"), "no training loop found in infer.py",
                    "for batch in DETECTOR.start(loader):", "from torchport.shapes import DETECTOR")
    _one_line_error(cli("shapes", "--steps", "0", "infer.py"), "--steps must be at least 1, not 0")
    _one_line_error(cli("shapes", "--steps", "x", "infer.py"), "--steps takes a whole number")


def test_a_sequence_model_with_the_loop_at_module_level(cli, in_tmp):
    (in_tmp / "train.py").write_text(scripts.SEQUENCE)
    status, out, err = cli("shapes", "--all", "-o", "reports", "train.py")
    assert status == 0, err
    assert "trained 6" in out and "recording the loop at train.py:25" in err
    table = _report(in_tmp / "reports")
    want = scripts.expected(scripts.SEQUENCE)
    assert _sites(table, "yes") == want["dynamic"]
    assert want["static"] <= _sites(table, "no")
    embedding = next(row for row in table if row["Function Name"] == "torch.nn.Embedding")
    assert (embedding["File Path"], embedding["Input Shape Range"], embedding["Output Shape Range"]) == \
        ("train.py", "[(4, 5)-(4, 12)]", "[(4, 5, 16)-(4, 12, 16)]")
    assert (embedding["Distinct Shapes"], embedding["Iterations"]) == ("4", "6")
    assert "6 steps" in err and "torch._dynamo.mark_dynamic(tokens, 1)" in err


def test_an_image_model_whose_loop_is_in_train_one_epoch(cli, in_tmp):
    (in_tmp / "train.py").write_text(scripts.IMAGES)
    status, _, err = cli("shapes", "--all", "train.py")
    assert status == 0, err
    assert "recording the loop at train.py:20  for step, (images, labels) in enumerate(loader):" in err
    table = _report(in_tmp)
    want = scripts.expected(scripts.IMAGES)
    assert _sites(table, "yes") == want["dynamic"]
    assert want["static"] <= _sites(table, "no")
    conv = next(row for row in table if row["Function Name"] == "torch.nn.Conv2d")
    assert conv["Input Shape Range"] == "[(2, 3, 8, 8)-(2, 3, 16, 16)]"
    assert conv["Varying Dims"] == \
        "input 0 dim 2: 8..16; input 0 dim 3: 8..16; output 0 dim 2: 8..16; output 0 dim 3: 8..16"
    assert conv["Iterations"] == "8"  # two epochs of four steps


def test_a_tqdm_loop_stops_after_the_steps_asked(cli, in_tmp):
    (in_tmp / "train.py").write_text(scripts.TQDM)
    status, out, err = cli("shapes", "--steps", "3", "--report", "tq.csv", "train.py", "50")
    assert status == 0, err
    assert "ARGS" not in out  # the program was stopped inside its loop
    assert "stopped after 3 steps (--steps 3)" in err and "recording the loop at train.py:20  for i in pbar:" in err
    ones = next(row for row in _report(in_tmp, "tq.csv") if row["Function Name"] == "torch.ones")
    assert (ones["Line Number"], ones["Output Shape Range"], ones["Iterations"]) == ("21", "[(1, 3)-(3, 3)]", "3")
    assert sys.argv[0] != "train.py"  # sys put back


def test_a_script_that_fails_reports_the_steps_it_finished(cli, in_tmp):
    (in_tmp / "train.py").write_text(scripts.FAILING)
    status, _, err = cli("shapes", "train.py")
    assert status == 1
    assert 'File "' + str(in_tmp / "train.py") + '", line 8, in <module>' in err.split("Traceback")[1].splitlines()[1]
    assert "RuntimeError: boom at step 3" in err
    mul = next(row for row in _report(in_tmp) if row["Function Name"] == "torch.Tensor.mul")
    assert mul["Iterations"] == "3" and mul["Input Shape Range"] == "[(1, 2)-(3, 2), (2,)-(2,)]"


def test_a_cuda_script_runs_on_the_cpu_with_detection(tmp_path):
    cuda_script = (scripts.SEQUENCE.replace("model = SequenceModel()", "model = SequenceModel().cuda()")
                   .replace("logits = model(tokens)", "logits = model(tokens.cuda())")
                   .replace("loss = F.cross_entropy(logits, labels)", "loss = F.cross_entropy(logits, labels.to('cuda'))"))
    (tmp_path / "train.py").write_text(cuda_script)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("TORCHPORT_")}
    result = subprocess.run([str(BIN / "torchport"), "shapes", "--target", "cpu", "-o", "out", "train.py"],
                            cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    assert "trained 6" in result.stdout
    assert "torch.Tensor.cuda -> torch.Tensor.cpu" in (tmp_path / "out" / "torchport_run.log").read_text()
    assert _sites(_report(tmp_path / "out"), "yes") == scripts.expected(scripts.SEQUENCE)["dynamic"]


@pytest.mark.fidelity  # torchrun and two ranks: make fidelity
def test_under_torchrun_each_rank_writes_its_own_report(tmp_path):
    """DDP on gloo, two ranks: the wrapper's call is the user's line, the model's own calls are
    seen through it, and each rank reports the shapes it saw."""
    (tmp_path / "train.py").write_text(scripts.DDP)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("TORCHPORT_")}
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--no-python",
                             str(BIN / "torchport"), "shapes", "--all", "-o", "out", "train.py"],
                            cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("recording the loop at train.py") == 1  # rank 0 speaks, every rank records
    want = scripts.expected(scripts.DDP)
    for rank in (0, 1):
        table = _report(tmp_path / "out", f"dynamic_shape_report.rank{rank}.csv")
        assert _sites(table, "yes") == want["dynamic"]
        assert want["static"] <= _sites(table, "no")
        model = next(row for row in table if row["Function Name"] == "torch.nn.parallel.DistributedDataParallel")
        assert model["Input Shape Range"] == f"[({2 + rank}, 3)-({4 + rank}, 3)]"  # each rank its own batches
