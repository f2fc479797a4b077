"""`ops capture`: a script runs as it would, its aten ops recorded; --steps ends it early."""

from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")


def _read(path):
    return json.loads(path.read_text())


def test_recording_leaves_the_results_of_training_unchanged(cnn):
    from torchport.ops.recorder import OpRecorder

    plain = cnn.build()
    losses = [cnn.step(*plain) for _ in range(3)]
    recorded = cnn.build()
    with OpRecorder() as recorder:
        recorded_losses = [cnn.step(*recorded) for _ in range(3)]
    assert recorder.calls
    assert all(torch.equal(a, b) for a, b in zip(losses, recorded_losses))
    assert all(torch.equal(a, b) for a, b in zip(plain[0].parameters(), recorded[0].parameters()))


def test_steps_ends_the_script_after_that_many_optimizer_steps(cli, cnn_script, tmp_path):
    out = tmp_path / "ops.json"
    status, printed, stderr = cli("ops", "capture", "-o", out, "--steps", "2", cnn_script, "5")
    assert status == 0 and stderr == ""
    # the script ends inside its second optimizer.step(), before it prints that step's loss
    assert "step 0 loss" in printed and "step 1 loss" not in printed
    assert f"2 optimizer steps on cpu -> {out}" in printed
    data = _read(out)
    assert data["schema"] == "torchport-ops/1"
    assert data["source"]["optimizer_steps"] == 2 and data["source"]["args"] == ["5"]
    ops = {op["name"]: op for op in data["ops"]}
    assert ops["aten::addmm"]["count"] == 2 and ops["aten::addmm"]["overloads"] == ["default"]
    assert ops["aten::addmm"]["dtypes"] == ["float32"]


def test_a_script_runs_to_its_end_without_steps(cli, cnn_script, tmp_path):
    status, printed, _ = cli("ops", "capture", "-o", tmp_path / "ops.json", cnn_script, "3")
    assert status == 0 and "step 2 loss" in printed
    assert {op["name"]: op for op in _read(tmp_path / "ops.json")["ops"]}["aten::addmm"]["count"] == 3


def test_a_crashing_script_is_one_line_and_its_ops_so_far_are_written(cli, tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent(
        """
        import torch
        x = torch.ones(3, 4) @ torch.ones(4, 2)
        raise RuntimeError("out of patience\\nsecond line")
        """
    ))
    status, stdout, stderr = cli("ops", "capture", "-o", tmp_path / "ops.json", script)
    assert status == 1 and stdout == ""
    assert stderr.splitlines() == [
        f"torchport ops capture: error: {script}:4 raised RuntimeError: out of patience "
        f"(the 4 ops it ran before are in {tmp_path / 'ops.json'})"
    ]
    names = {op["name"] for op in _read(tmp_path / "ops.json")["ops"]}
    assert names == {"aten::ones", "aten::empty", "aten::fill_", "aten::mm"}  # ones fills an empty tensor


def test_a_script_that_exits_with_a_status_is_reported(cli, tmp_path):
    script = tmp_path / "bye.py"
    script.write_text("import sys\nsys.exit(3)\n")
    status, _, stderr = cli("ops", "capture", "-o", tmp_path / "ops.json", script)
    assert status == 1 and f"{script} exited with status 3" in stderr
    assert _read(tmp_path / "ops.json")["ops"] == []


def test_an_interrupted_script_keeps_what_it_ran(cli, tmp_path):
    script = tmp_path / "long.py"
    script.write_text("import torch\ntorch.ones(2) + 1\nraise KeyboardInterrupt\n")
    status, _, stderr = cli("ops", "capture", "-o", tmp_path / "ops.json", script)
    assert status == 130 and stderr.startswith("torchport ops capture: interrupted (the ")
    assert "aten::add" in {op["name"] for op in _read(tmp_path / "ops.json")["ops"]}
