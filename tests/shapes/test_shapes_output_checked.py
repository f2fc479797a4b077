"""`shapes -o DIR` (and --report, --log) is checked before the script runs: a report it could not
write after the run is one line and status 2 at once, and the script never starts. The detector
used by hand says so at its first step, and the training goes on."""

from __future__ import annotations


import pytest

from _unwritable import needs_unwritable

pytest.importorskip("torch")

# A training loop `shapes` finds; its first line leaves a mark, so a test sees whether it started.
SCRIPT = """\
open({marker!r}, "w").close()
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = (model(torch.ones(step + 1, 3)) % 1.).sum()
    loss.backward()
    optimizer.step()
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(marker=str(tmp_path / "started")))
    return path


def _refused(cli, tmp_path, *args_and_said):
    *args, said = args_and_said
    status, _, stderr = cli("shapes", *args)
    assert status == 2, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    assert said in stderr, stderr
    assert not (tmp_path / "started").exists(), "the script ran"


def test_a_missing_folder_above_the_output_is_refused_before_the_run(cli, tmp_path, script):
    out = tmp_path / "typo" / "reports"
    _refused(cli, tmp_path, "-o", out, script, f"-o {out}: no folder {tmp_path / 'typo'} to make reports in")


def test_a_file_given_for_the_output_folder_is_refused(cli, tmp_path, script):
    (tmp_path / "reports").write_text("")
    _refused(cli, tmp_path, "-o", tmp_path / "reports", script, "is a file, not a folder")


def test_a_report_name_that_is_a_folder_is_refused(cli, tmp_path, script):
    (tmp_path / "out" / "report.csv").mkdir(parents=True)
    _refused(cli, tmp_path, "-o", tmp_path / "out", "--report", "report.csv", script, "report.csv: is a folder")


def test_the_run_time_log_is_checked_with_target(cli, tmp_path, script):
    log = tmp_path / "missing" / "logs" / "run.log"
    _refused(cli, tmp_path, "--target", "cpu", "--log", log, "-o", tmp_path, script, f"--log {log}: no folder")


@needs_unwritable
def test_a_folder_that_cannot_be_written_is_refused(cli, tmp_path, script):
    _refused(cli, tmp_path, "-o", "/sys", script, "cannot write in /sys")


def test_a_missing_output_folder_is_made_when_the_one_above_exists(cli, tmp_path, script):
    status, _, stderr = cli("shapes", "-o", tmp_path / "reports", script)
    assert status == 0, stderr
    assert (tmp_path / "reports" / "dynamic_shape_report.csv").is_file()


@needs_unwritable
def test_the_detector_by_hand_says_at_its_first_step_that_its_report_cannot_be_written(capsys):
    from torchport.shapes.detector import ShapeDetector

    detector = ShapeDetector(report="/sys/dynamic_shape_report.csv")
    steps = [capsys.readouterr().err for _ in detector.start(range(2))]
    assert "the report will not be written: DETECTOR.report /sys/dynamic_shape_report.csv: cannot write in /sys" in steps[0]
    assert detector.steps == 2  # the training went on
    detector.configure(save_at_exit=False)
