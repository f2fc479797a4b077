"""One log per process under real launchers: a 2-rank torchrun started by `torchport run`, and an
mp.spawn of 2 processes started by `torchport run` and by TORCHPORT_TARGET=cpu. Every worker writes
its own complete file with its rank (or spawn index) in the name; the launcher (`torchport run`
itself, an mp.spawn parent that only spawns) writes no file and prints no summary.

TORCHPORT_TARGET=cpu torchrun (the agent patched through torch's entry point) is checked the same
way on the ddp_train example in test_runtime_examples.py, which runs it anyway: each launch here
costs about 4.5 CPU-s (three processes importing torch)."""

from __future__ import annotations

import re
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.fidelity  # three launches of two or three processes each: make fidelity

SCRIPT = textwrap.dedent("""
    import os
    import torch
    import torch.multiprocessing as mp

    if __name__ == "__mp_main__":  # a spawned child importing this file, before it knows its index
        torch.cuda.synchronize()


    def work(index):
        torch.cuda.set_device(index)
        for _ in range(3):
            x = torch.ones(2, device="cuda")
            torch.cuda.synchronize()
        # one write of a whole line: two workers share the pipe, and print() may write the text and its newline apart
        os.write(1, f"WORKER {index} pid {os.getpid()} {x.device.type}\\n".encode())


    if __name__ == "__main__":
        if "LOCAL_RANK" in os.environ:  # a torchrun worker
            work(int(os.environ["LOCAL_RANK"]))
        else:  # the parent only spawns
            mp.spawn(work, nprocs=2)
""")
TWO_RANKS = ["--standalone", "--nproc_per_node", "2"]
LAUNCHES = {
    "torchrun-run": (["torchport", "run", "--target", "cpu", "-m", "torch.distributed.run", *TWO_RANKS,
                      "work.py"], "rank"),
    "spawn-env": ([sys.executable, "work.py"], "proc"),
    "spawn-run": (["torchport", "run", "--target", "cpu", "work.py"], "proc"),
}
HEADER = re.compile(r"^# torchport run: target cpu \(device type cpu\), torch \S+, pid (?P<pid>\d+), \S")
LINE = re.compile(r"^work\.py:(?P<line>\d+)  (?P<api>\S.*?) -> .+ \[(same|adapted|no-op|unsupported)\]")
SUMMARY = re.compile(r"^# summary: (?P<sites>\d+) call sites, (?P<calls>\d+) calls: \d+ same, \d+ adapted, "
                     r"\d+ no-op, \d+ unsupported$")
ANNOUNCED = re.compile(r"^torchport: \d+ call sites, .*; log: (?P<path>\S+)", re.MULTILINE)


def _line_after(text: str) -> int:
    return next(n for n, line in enumerate(SCRIPT.splitlines(), 1) if text in line) + 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_tool):
    """Every launch in its own directory, two at a time. A stale log of an earlier run lies in each
    directory under the name worker 0 will take: it is replaced, not appended to nor kept."""
    def launch(name):
        command, tag = LAUNCHES[name]
        directory = tmp_path_factory.mktemp(name)
        (directory / "work.py").write_text(SCRIPT)
        (directory / f"torchport_run.{tag}0.log").write_text("a stale log of an earlier run\n" * 50)
        result = run_tool(command, directory, env={"TORCHPORT_TARGET": "cpu", "OMP_NUM_THREADS": "1"})
        return result, directory

    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {name: pool.submit(launch, name) for name in LAUNCHES}
        return {name: job.result() for name, job in jobs.items()}


@pytest.mark.parametrize("name", LAUNCHES)
def test_each_worker_writes_one_complete_log_named_by_its_rank_and_the_launcher_none(runs, name):
    result, directory = runs[name]
    tag = LAUNCHES[name][1]
    assert result.returncode == 0, result.stderr[-3000:]
    workers = {int(i): int(pid) for i, pid in re.findall(r"^WORKER (\d) pid (\d+) cpu$", result.stdout, re.M)}
    assert sorted(workers) == [0, 1], result.stdout
    # one file per worker, and no other: the launcher (torchport_run.log) wrote none
    names = sorted(p.name for p in directory.glob("*.log"))
    assert names == [f"torchport_run.{tag}0.log", f"torchport_run.{tag}1.log"], names
    spawned = tag == "proc"
    for index, pid in workers.items():
        lines = (directory / f"torchport_run.{tag}{index}.log").read_text().splitlines()
        header = HEADER.match(lines[0])
        assert header and int(header["pid"]) == pid, lines  # written by that worker, from its first line
        entries = [LINE.match(line) for line in lines[1:] if not line.startswith("#")]
        assert all(entries) and len(entries) == 3 + spawned, lines
        assert [m["api"] for m in entries] == ["torch.cuda.synchronize"] * spawned + [
            "torch.cuda.set_device", "torch.ones(device='cuda')", "torch.cuda.synchronize"], lines
        if spawned:  # the call made while the child imported the script is in its own file
            assert int(entries[0]["line"]) == _line_after('if __name__ == "__mp_main__"')
        summary = [SUMMARY.match(line) for line in lines if line.startswith("# summary:")]
        assert len(summary) == 1 and summary[0], lines
        assert int(summary[0]["sites"]) == len(entries) and int(summary[0]["calls"]) == 2 * 3 + 1 + spawned
        assert lines[1 + len(entries)].startswith("# summary:") and len(lines) == 1 + len(entries) + 1 + 3, lines
        assert f"#   torch.cuda.synchronize: {1 + spawned} site{'s' * spawned}, {3 + spawned} calls" in lines
        assert "stale" not in "\n".join(lines)
    # one summary on stderr, from worker 0; none from the launcher or the other worker
    announced = ANNOUNCED.findall(result.stderr)
    assert announced == [str(directory / f"torchport_run.{tag}0.log")], result.stderr[-3000:]
    assert "cannot write the log" not in result.stderr
