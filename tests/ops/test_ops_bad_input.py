"""Bad input to `torchport ops`: one line naming the file, exit status 2, never a traceback; what
was read before a cut is kept."""

from __future__ import annotations

import json

import pytest


def _one_line(status: int, stderr: str, path) -> str:
    assert status == 2
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr and str(path) in lines[0], stderr
    return lines[0]


def test_a_missing_profile(cli, tmp_path):
    status, _, err = cli("ops", "extract", tmp_path / "nope.log", "-o", tmp_path / "ops.json")
    assert _one_line(status, err, tmp_path / "nope.log").endswith("nope.log: no such file")
    assert not (tmp_path / "ops.json").exists()


def test_an_empty_profile(cli, tmp_path):
    (tmp_path / "empty.log").write_text("\n \n")
    status, _, err = cli("ops", "extract", tmp_path / "empty.log", "-o", tmp_path / "ops.json")
    assert _one_line(status, err, tmp_path / "empty.log").endswith("empty.log: empty file")


def test_a_log_without_a_profiler_table(cli, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("epoch 1 loss 0.3\n------  ------\nNot  a table\n------  ------\n")
    status, _, err = cli("ops", "extract", log, "-o", tmp_path / "ops.json")
    assert "no profiler table in it" in _one_line(status, err, log)
    assert not (tmp_path / "ops.json").exists()


def test_a_table_cut_short_keeps_its_rows(cli, profiled, tmp_path):
    log = tmp_path / "cut.log"
    lines = profiled.table.splitlines()
    log.write_text("\n".join(lines[:12]) + "\n")  # the rules, the header, 9 rows; no end
    status, _, err = cli("ops", "extract", log, "-o", tmp_path / "ops.json")
    line = _one_line(status, err, log)
    assert "the table ends without its closing line" in line and str(tmp_path / "ops.json") in line
    assert 0 < len(json.loads((tmp_path / "ops.json").read_text())["ops"]) <= 9


def test_a_truncated_chrome_trace_keeps_the_events_before_the_cut(cli, profiled, tmp_path):
    text = profiled.trace.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"aten::mm"')])
    status, _, err = cli("ops", "extract", cut, "-o", tmp_path / "ops.json")
    line = _one_line(status, err, cut)
    assert "invalid JSON at line" in line and "events before it" in line
    names = {op["name"] for op in json.loads((tmp_path / "ops.json").read_text())["ops"]}
    assert "aten::addmm" in names and "aten::mm" not in names


@pytest.mark.parametrize("text, said", [
    ('{"traceEvents": [{"ph": "X", "cat": "cpu_op"', "a chrome trace without operator events"),
    ('{"schema": 1}', 'no chrome trace (no "traceEvents" list)'),
    ("{not json", "not a chrome trace: invalid JSON at line 1"),
])
def test_json_that_is_no_usable_trace(cli, tmp_path, text, said):
    path = tmp_path / "trace.json"
    path.write_text(text)
    status, _, err = cli("ops", "extract", path, "-o", tmp_path / "ops.json")
    assert said in _one_line(status, err, path)


@pytest.mark.parametrize("text, said", [
    (None, "no such file"),
    ("[1, 2", "not an ops.json (invalid JSON at line 1"),
    ('{"ops": []}', 'not an ops.json (no "schema": "torchport-ops/1"'),
    ('{"schema": "torchport-ops/1", "ops": [{"count": 1}]}', 'op 1 has no "name" and "count"'),
])
def test_check_of_a_file_that_is_no_ops_json(cli, tmp_path, text, said):
    path = tmp_path / "ops.json"
    if text is not None:
        path.write_text(text)
    status, _, err = cli("ops", "check", path, "--target", "npu")
    assert said in _one_line(status, err, path)


def test_capture_of_a_missing_script(cli, tmp_path):
    status, _, err = cli("ops", "capture", "-o", tmp_path / "ops.json", tmp_path / "train.py")
    assert _one_line(status, err, tmp_path / "train.py").endswith("train.py: no such script")


def test_help_explains_each_action(torchport):
    done = torchport("ops", "--help")
    assert done.returncode == 0 and "extract PROFILE" in done.stdout and "exit status" in done.stdout
    for action, said in (("extract", "key_averages"), ("capture", "--steps N ends the run"), ("check", "Verdicts")):
        done = torchport("ops", action, "--help")
        assert done.returncode == 0 and said in done.stdout, action


def test_a_log_whose_lines_start_with_a_bracket_is_read_as_a_log(cli, profiled, tmp_path):
    log = tmp_path / "rank0.log"
    log.write_text("\n".join(f"[rank0]: {line}" for line in profiled.table.splitlines()) + "\n")
    status, out, err = cli("ops", "extract", log, "-o", tmp_path / "ops.json")
    assert status == 0 and err == "" and "1 profiler table(s)" in out


def test_a_gzipped_trace_is_read_and_one_cut_short_keeps_what_it_holds(cli, profiled, tmp_path):
    import gzip

    packed = gzip.compress(profiled.trace.read_bytes())
    (tmp_path / "trace.json.gz").write_bytes(packed)
    status, out, _ = cli("ops", "extract", tmp_path / "trace.json.gz", "-o", tmp_path / "ops.json")
    assert status == 0 and "chrome trace" in out
    (tmp_path / "cut.json.gz").write_bytes(packed[: len(packed) * 2 // 3])
    status, _, err = cli("ops", "extract", tmp_path / "cut.json.gz", "-o", tmp_path / "ops.json")
    assert "events before it" in _one_line(status, err, tmp_path / "cut.json.gz")
    assert json.loads((tmp_path / "ops.json").read_text())["ops"]
