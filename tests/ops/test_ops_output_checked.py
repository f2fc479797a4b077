"""`ops capture -o OUT` checks OUT before the script runs: a path it could not write after the run
is one line and status 2 at once, and the script never starts (no training lost)."""

from __future__ import annotations


import pytest

from _unwritable import needs_unwritable

pytest.importorskip("torch")

SCRIPT = "open({marker!r}, 'w').close()\nimport torch\nprint(float((torch.ones(3) * 3.7 % 1.).sum()))\n"


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(marker=str(tmp_path / "started")))
    return path


def _refused(cli, tmp_path, script, out, *said):
    status, stdout, stderr = cli("ops", "capture", "-o", out, script)
    assert status == 2 and stdout == "", stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    for fragment in said:
        assert fragment in stderr, stderr
    assert not (tmp_path / "started").exists(), "the script ran"


def test_a_missing_folder_above_the_folder_is_refused_before_the_run(cli, tmp_path, script):
    out = tmp_path / "typo" / "run1" / "ops.json"
    _refused(cli, tmp_path, script, out, f"-o {out}: no folder {tmp_path / 'typo'} to make run1 in")
    assert not (tmp_path / "typo").exists()


def test_a_file_where_the_folder_should_be_is_refused(cli, tmp_path, script):
    (tmp_path / "notes.txt").write_text("")
    out = tmp_path / "notes.txt" / "ops.json"
    _refused(cli, tmp_path, script, out, f"{tmp_path / 'notes.txt'} is a file, not a folder")


def test_a_folder_given_for_the_file_is_refused(cli, tmp_path, script):
    _refused(cli, tmp_path, script, tmp_path, f"-o {tmp_path}: is a folder")


@needs_unwritable
def test_a_folder_that_cannot_be_written_is_refused(cli, tmp_path, script):
    _refused(cli, tmp_path, script, "/sys/ops.json", "cannot write in /sys")


def test_a_missing_folder_is_made_when_the_one_above_exists(cli, tmp_path, script):
    out = tmp_path / "runs" / "ops.json"
    status, stdout, stderr = cli("ops", "capture", "-o", out, script)
    assert status == 0, stderr
    assert (tmp_path / "started").exists() and out.is_file() and "aten::remainder" in out.read_text()


def test_check_csv_and_extract_out_follow_the_same_rule(cli, tmp_path, profiled):
    log = tmp_path / "train.log"
    log.write_text(profiled.table)
    status, _, stderr = cli("ops", "extract", log, "-o", tmp_path / "a" / "b" / "ops.json")
    assert status == 2 and "no folder" in stderr
    assert cli("ops", "extract", log, "-o", tmp_path / "ops" / "ops.json")[0] == 0
    status, _, stderr = cli("ops", "check", tmp_path / "ops" / "ops.json", "--target", "mps",
                            "--csv", tmp_path / "ops" / "ops.json" / "mps.csv")
    assert status == 2 and "is a file, not a folder" in stderr
