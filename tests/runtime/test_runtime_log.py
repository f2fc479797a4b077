"""The call-site log: its line format, once per call site, the summary, one file per process."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import torch

from torchport import runtime
from torchport.runtime.calllog import CallLog, short_path, log_path_for_process

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
    assert log_path_for_process("out/run.log", forked=True) == f"out/run.pid{os.getpid()}.log"
    monkeypatch.setenv("RANK", "0")  # every rank has its own name, rank 0 too: none is the launcher's
    assert log_path_for_process("torchport_run.log") == "torchport_run.rank0.log"
    monkeypatch.setenv("RANK", "3")
    assert log_path_for_process("torchport_run.log") == "torchport_run.rank3.log"
    assert log_path_for_process("a.b.log", forked=True) == f"a.b.rank3.pid{os.getpid()}.log"


def _synchronize_verdict():
    from torchport.targets.verdict import Kind, Verdict

    return Verdict("torch.cuda.synchronize", Kind.NOOP, "(removed)")


def test_a_log_that_a_live_process_holds_is_never_truncated(tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    path = tmp_path / "run.log"
    first = CallLog(str(path), "# first")
    first.note(_synchronize_verdict(), 0); one = _line_here()  # noqa: E702
    second = CallLog(str(path), "# second")  # same name: another process, as far as flock can tell
    second.note(_synchronize_verdict(), 0)
    first.note(_synchronize_verdict(), 0); two = _line_here()  # noqa: E702
    first.close()
    second.close()
    here = short_path(__file__)  # as the log spells a file: relative to the working directory below it
    assert path.read_text().splitlines() == [
        "# first",
        f"{here}:{one}  torch.cuda.synchronize -> (removed) [no-op]",
        f"{here}:{two}  torch.cuda.synchronize -> (removed) [no-op]",
        "# summary: 2 call sites, 2 calls: 0 same, 0 adapted, 2 no-op, 0 unsupported",
        "#   torch.cuda.synchronize: 2 sites, 2 calls",
    ]
    other = tmp_path / f"run.pid{os.getpid()}.log"
    assert second.path == str(other) and other.read_text().splitlines()[0] == "# second"


def test_a_log_left_by_an_earlier_run_is_replaced(tmp_path):
    path = tmp_path / "run.log"
    path.write_text("old line\n" * 100)
    log = CallLog(str(path), lambda pid: f"# header, pid {pid}")
    log.note(_synchronize_verdict(), 0)
    log.close()
    lines = path.read_text().splitlines()
    assert lines[0] == f"# header, pid {os.getpid()}" and len(lines) == 4 and "old line" not in lines


def test_a_process_that_made_no_redirected_call_writes_and_prints_nothing(tmp_path, capsys):
    """A launcher's start-up notes (an environment variable it copied) make no file and no
    summary; in a process that goes on to make a call they come first in its file."""
    from torchport.targets.verdict import Kind, Verdict

    copied = Verdict("CUDA_VISIBLE_DEVICES=0", Kind.SAME, "ZE_AFFINITY_MASK=0")
    launcher = CallLog(str(tmp_path / "launcher.log"), "#")
    launcher.note_at("(environment)", copied, startup=True)
    launcher.close()
    assert not (tmp_path / "launcher.log").exists() and capsys.readouterr().err == ""
    worker = CallLog(str(tmp_path / "worker.log"), "#")
    worker.note_at("(environment)", copied, startup=True)
    worker.note(_synchronize_verdict(), 0)
    worker.close()
    lines = (tmp_path / "worker.log").read_text().splitlines()
    assert lines[:2] == ["#", "(environment)  CUDA_VISIBLE_DEVICES=0 -> ZE_AFFINITY_MASK=0 [same]"]
    assert lines[3] == "# summary: 2 call sites, 2 calls: 1 same, 0 adapted, 1 no-op, 0 unsupported"
    assert "torchport: 2 call sites" in capsys.readouterr().err


def test_a_spawned_child_names_its_file_once_it_knows_which_process_it_is(tmp_path, monkeypatch):
    """While a spawned child imports the parent's main module it cannot tell its mp.spawn index:
    calls made then are held back, and written once it can (or, at exit, under its pid)."""
    import multiprocessing

    monkeypatch.delenv("RANK", raising=False)
    me = multiprocessing.current_process()
    monkeypatch.setattr(me, "_inheriting", True, raising=False)
    early = CallLog(str(tmp_path / "run.log"), "#")
    early.note(_synchronize_verdict(), 0); first = _line_here()  # noqa: E702
    assert list(tmp_path.iterdir()) == []
    monkeypatch.delattr(me, "_inheriting")
    early.note(_synchronize_verdict(), 0); line = _line_here()  # noqa: E702
    early.close()
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert [lines[0], *(int(LINE.match(entry)["line"]) for entry in lines[1:3])] == ["#", first, line], lines
    assert lines[3:] == ["# summary: 2 call sites, 2 calls: 0 same, 0 adapted, 2 no-op, 0 unsupported",
                         "#   torch.cuda.synchronize: 2 sites, 2 calls"]

    monkeypatch.setattr(me, "_inheriting", True, raising=False)
    never = CallLog(str(tmp_path / "never.log"), "#")
    never.note(_synchronize_verdict(), 0)
    never.close()
    assert (tmp_path / f"never.pid{os.getpid()}.log").read_text().startswith("#\n")


def test_only_worker_zero_announces(tmp_path, monkeypatch, capsys):
    for rank, announced in (("1", False), ("0", True)):
        monkeypatch.setenv("RANK", rank)
        log = CallLog(str(tmp_path / "run.log"), "#")
        log.note(_synchronize_verdict(), 0)
        log.close()
        assert (tmp_path / f"run.rank{rank}.log").exists()
        err = capsys.readouterr().err
        assert (f"log: {tmp_path / 'run.rank0.log'} (and one per other rank)" in err) is announced, err


def _forked_child(done):
    torch.cuda.synchronize(); torch.cuda.synchronize()  # noqa: E702
    done.put(os.getpid())


def test_a_forked_child_writes_its_own_file_with_its_own_calls(tmp_path, monkeypatch):
    """A fork (a DataLoader worker, a multiprocessing Process) inherits the open log: it must not
    write into its parent's file, and leaves by os._exit, past atexit, yet closes its own."""
    import multiprocessing

    monkeypatch.delenv("RANK", raising=False)
    context = multiprocessing.get_context("fork")
    runtime.apply("cpu", log=str(tmp_path / "run.log"))
    try:
        torch.cuda.synchronize(); before = _line_here()  # noqa: E702
        done = context.SimpleQueue()
        child = context.Process(target=_forked_child, args=(done,))
        child.start()
        child.join(60)
        torch.cuda.empty_cache(); after = _line_here()  # noqa: E702
    finally:
        runtime.undo()
    assert child.exitcode == 0
    pid = done.get()
    parent = (tmp_path / "run.log").read_text().splitlines()
    assert f"pid {os.getpid()}," in parent[0] and str(pid) not in parent[0]
    entries = [LINE.match(line) for line in parent[1:3]]
    assert [(m["api"], int(m["line"])) for m in entries] == [
        ("torch.cuda.synchronize", before), ("torch.cuda.empty_cache", after)], parent
    assert parent[3].startswith("# summary: 2 call sites, 2 calls") and len(parent) == 6, parent
    lines = (tmp_path / f"run.pid{pid}.log").read_text().splitlines()
    assert f", pid {pid}, " in lines[0]
    assert [LINE.match(line)["api"] for line in lines[1:-2]] == ["torch.cuda.synchronize"]
    assert lines[-2:] == ["# summary: 1 call sites, 2 calls: 0 same, 0 adapted, 1 no-op, 0 unsupported",
                          "#   torch.cuda.synchronize: 1 site, 2 calls"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run.log", f"run.pid{pid}.log"])
