"""Every bundled CUDA example, unmodified, runs to its FINAL line on the cpu and accelerator targets:
with `torchport run`, or (scripts that call init_process_group) under torchrun with TORCHPORT_TARGET."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Short runs: the point is that every CUDA call is redirected, not that the model trains well.
SHORT = {
    "amp_classifier": ["--epochs", "1", "--steps", "3"],
    "autoencoder_quickstart": ["--epochs", "1", "--steps", "3"],
    "cnn_benchmark": ["--steps", "3", "--warmup", "1"],
    "ddp_train": ["--epochs", "1", "--steps", "3"],
    "transformer_checkpoint": ["--epochs", "1", "--steps", "3"],
}
SCRIPTS = sorted(EXAMPLES.glob("*.py"))
LOG_LINE = re.compile(r"^\S+:\d+  \S.* -> .+ \[(same|adapted|no-op|unsupported)\]")


def _distributed(script) -> bool:
    return "init_process_group" in script.read_text()


def _final_line(result) -> str:
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def test_the_examples_are_there():
    assert len(SCRIPTS) >= 5 and any(_distributed(s) for s in SCRIPTS)


TARGETS = ["cpu", "accelerator"]
CASES = [(script, target) for script in SCRIPTS for target in TARGETS]


def _run(run_tool, script, target, directory):
    """Run one example on one target in `directory`: (CompletedProcess, the log files to check)."""
    args = SHORT.get(script.stem, [])
    if _distributed(script):
        command = ["torchrun", "--nproc_per_node", "2", str(script), *args]
        result = run_tool(command, directory, env={"TORCHPORT_TARGET": target, "OMP_NUM_THREADS": "1"})
        return result, [directory / "torchport_run.rank0.log", directory / "torchport_run.rank1.log"]
    command = ["torchport", "run", "--target", target, str(script), *args]
    return run_tool(command, directory), [directory / "torchport_run.log"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_tool):
    """All example runs, two at a time (each is mostly one busy process)."""
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for script, target in CASES:
            directory = tmp_path_factory.mktemp(f"{script.stem}-{target}")
            jobs[(script, target)] = pool.submit(_run, run_tool, script, target, directory)
    return {case: job.result() for case, job in jobs.items()}


@pytest.mark.fidelity  # (whole example runs, as make demo does them: in make fidelity, with the pattern projects)
@pytest.mark.parametrize("script, target", CASES, ids=[f"{s.stem}-{t}" for s, t in CASES])
def test_example_runs_to_its_final_line(runs, script, target):
    result, logs = runs[(script, target)]
    assert result.returncode == 0, result.stderr[-3000:]
    assert _final_line(result).startswith("FINAL "), result.stdout[-2000:]
    # one file per process that ran the script (per rank under torchrun), none from the launcher
    assert sorted(path.name for path in logs[0].parent.glob("*.log")) == sorted(log.name for log in logs)
    for log in logs:
        lines = log.read_text().splitlines()
        entries = [line for line in lines if not line.startswith("#")]
        assert entries and all(LOG_LINE.match(line) for line in entries), entries
        assert all(script.name in line.split(":")[0] for line in entries), entries
        # complete: its header first, then its lines, then one summary that counts them
        assert lines[0].startswith(f"# torchport run: target {target} (device type "), lines
        assert lines[1:1 + len(entries)] == entries and lines[1 + len(entries)].startswith(
            f"# summary: {len(entries)} call sites, "), lines
        assert sum(line.startswith("# summary:") for line in lines) == 1, lines
    # one summary line on stderr: rank 0's (torchrun's agent, which ran no script, prints none)
    announced = re.findall(r"^torchport: \d+ call sites, .*; log: (\S+)", result.stderr, re.MULTILINE)
    assert announced == [str(logs[0])], result.stderr[-3000:]
