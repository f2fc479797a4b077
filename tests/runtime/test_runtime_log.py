"""The call-site log: its line format, once per call site, the summary, one file per process."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import torch

from torchport import runtime
from torchport.runtime.calllog import log_path_for_process

LINE = re.compile(r"^(?P<file>\S+):(?P<line>\d+)  (?P<api>\S.*?) -> (?P<to>.+?) \[(?P<kind>same|adapted|no-op|unsupported)\]")


def _line_here() -> int:
    return sys._getframe(1).f_lineno


def test_each_call_site_is_logged_once_with_file_line_and_verdict(tmp_path):
    log = tmp_path / "run.log"
    runtime.apply("cpu", log=str(log))
    try:
        for _ in range(5):
            torch.cuda.synchronize(); first = _line_here()  # noqa: E702
        torch.cuda.synchronize(); second = _line_here()  # noqa: E702
        torch.nn.Linear(2, 2, device="cuda"); factory = _line_here()  # noqa: E702
    finally:
        runtime.undo()
    lines = log.read_text().splitlines()
    assert lines[0].startswith("# torchport run: target cpu (device type cpu)")
    entries = [LINE.match(line) for line in lines if not line.startswith("#")]
    assert all(entries), lines
    sync = [(m["file"], int(m["line"])) for m in entries if m["api"] == "torch.cuda.synchronize"]
    assert [line for _, line in sync] == [first, second]
    assert all(file.endswith(Path(__file__).name) for file, _ in sync)
    assert any(m["api"] == "torch.cuda.synchronize" and m["kind"] == "no-op" and m["to"] == "(removed)"
               for m in entries)
    # a factory called inside torch (nn.Linear -> torch.empty) is reported at the user's line
    assert [int(m["line"]) for m in entries if m["api"].startswith("torch.empty(")] == [factory]
    summary = [line for line in lines if line.startswith("# summary:")]
    assert len(summary) == 1 and "calls" in summary[0]
    assert "#   torch.cuda.synchronize: 2 sites, 6 calls" in lines


def test_nothing_is_written_when_nothing_was_redirected(tmp_path):
    log = tmp_path / "quiet.log"
    runtime.apply("cpu", log=str(log))
    torch.zeros(2).to("cpu")
    runtime.undo()
    assert not log.exists()


def test_the_summary_is_announced_on_stderr(tmp_path, capsys):
    runtime.apply("cpu", log=str(tmp_path / "run.log"))
    torch.cuda.empty_cache()
    runtime.undo()
    err = capsys.readouterr().err
    assert re.search(r"torchport: 1 call sites, 1 calls: 0 same, 0 adapted, 1 no-op, 0 unsupported; log: ", err)


def test_each_process_writes_its_own_file(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    assert log_path_for_process("out/torchport_run.log") == "out/torchport_run.log"
    monkeypatch.setenv("RANK", "0")
    assert log_path_for_process("torchport_run.log") == "torchport_run.log"
    monkeypatch.setenv("RANK", "3")
    assert log_path_for_process("torchport_run.log") == "torchport_run.rank3.log"
