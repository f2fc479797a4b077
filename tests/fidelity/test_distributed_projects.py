"""Multi-card pattern projects (#22's "Done when"): CUDA training scripts written the way public
projects write them (distributed/projects/: a DataParallel trainer, an imagenet-style mp.spawn
trainer, an mnist-style single-card trainer, a single-card trainer that keeps its best checkpoint
and tests it, a yolov5-style trainer that asserts `device_count() > LOCAL_RANK`) train on two
CPU processes (gloo) after torchport has moved them, as they trained in one.

Modes:
  reference         `torchport run --target cpu`, one process: the single-card run to match
  migrated-torchrun `torchport migrate --distributed --target cpu`, the output under
                    `torchrun --standalone --nproc_per_node 2`
  migrated-python   the same output as plain python (a group of one, started without a launcher)
  run-torchrun      `torchrun --standalone --nproc_per_node 2 -m torchport run --distributed
                    --target cpu`, the script unmodified
  plain-python      `torchport migrate --target cpu` (no --distributed), the output as plain python:
                    without the flag the DataParallel and spawn trainers keep working, as one process
                    (those two only: the others' plain migration is the one pattern projects test)

Each run must reach its FINAL line on rank 0, and:
  - every training sample is seen exactly once per epoch across the processes, in equal shares
    (each process logs the indices it trained on: PROJECT_SEEN_LOG);
  - the weights after training (PROJECT_WEIGHTS, every process) match the reference within 1e-4
    relative, the global batch being kept; a project whose loader shuffles matches it only in a
    group of one (a DistributedSampler draws another order), and across processes its ranks agree
    and draw a new order each epoch (set_epoch);
  - only rank 0 prints progress (torchrun's per-rank logs) and saves: the files the reference saved,
    as many times, each by the process of RANK 0 (hooks/sitecustomize.py logs every torch.save).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from _processes import execute
from _torchrun import ATTEMPTS, transient

pytestmark = pytest.mark.fidelity  # `make fidelity`: too many processes for the unit suite's budget

HERE = Path(__file__).resolve().parent / "distributed"
PROJECT_DIR = HERE / "projects"
HOOKS = HERE / "hooks"  # sitecustomize.py: which process saved which file
BIN = Path(sys.executable).parent
TORCHPORT = [str(BIN / "torchport")] if (BIN / "torchport").exists() else [sys.executable, "-m", "torchport.cli"]
TORCHRUN = shutil.which("torchrun", path=str(BIN)) or "torchrun"
RANKS = 2
TIMEOUT_S = 60  # a run takes 4-10 s; a hung process group (a rendezvous nobody serves) waits for this
RELATIVE_TOLERANCE = 1e-4


class Project(NamedTuple):
    progress: str  # a line of progress it prints (a regular expression, matched at the line's start)
    args: tuple[str, ...] = ()  # its command line in every mode ("{port}": a free port)
    shuffled: bool = False  # its training loader shuffles
    cpu_fallback: bool = False  # without a GPU it trains on the CPU by itself (another path than CUDA's)


PROJECTS = {
    "dataparallel_trainer": Project(progress=r"epoch \d+ step \d+ loss"),
    "spawn_imagenet": Project(
        progress=r"Epoch: \[\d+\]| \* Epoch \d+ validation",
        args=("--dist-url", "tcp://127.0.0.1:{port}", "--multiprocessing-distributed", "--world-size", "1", "--rank", "0"),
    ),
    "mnist_single": Project(progress=r"Train Epoch: \d+|Test set: Average loss", args=("--save-model",), shuffled=True,
                            cpu_fallback=True),
    "best_checkpoint": Project(progress=r"Epoch \d+/\d+, Loss|Saved best model"),
    "local_rank_assert": Project(progress=r"\d+/\d+ batch \d+ loss|epoch \d+ val", cpu_fallback=True),
}

MODES = ["reference", "migrated-torchrun", "migrated-python", "run-torchrun", "plain-python"]
MIGRATIONS = {"migrated-torchrun": "distributed", "migrated-python": "distributed", "plain-python": "plain"}
LAUNCHED = {"migrated-torchrun", "run-torchrun"}  # two processes under torchrun
PLAIN_TOO = {"dataparallel_trainer", "spawn_imagenet"}  # the projects run in mode plain-python
CASES = [(name, mode) for name in PROJECTS for mode in MODES if mode != "plain-python" or name in PLAIN_TOO]
COMPARED = [(name, mode) for name, mode in CASES if mode != "reference"]  # against the reference


class Run(NamedTuple):
    result: subprocess.CompletedProcess
    stdouts: list[str]  # each process's stdout, by local rank (one for a single process)
    seen: list[list[tuple[int, list[int]]]]  # each training process's (epoch, sample indices) per step
    weights: list[dict[str, list]]  # each training process's final weights
    saves: list[tuple[str, str]]  # (RANK or "-", path relative to the working directory) per torch.save


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(run_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TORCHPORT_TARGET", None)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env.update(
        OMP_NUM_THREADS="1",
        PYTHONWARNINGS="ignore",
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([*paths, str(HOOKS)]),  # after tests/cpu_bf16 (conftest.py), which runs it
        PROJECT_SEEN_LOG=str(run_dir / "seen"),
        PROJECT_WEIGHTS=str(run_dir / "weights"),
        PROJECT_SAVES_LOG=str(run_dir / "saves.log"),
    )
    return env


def _execute(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return execute(command, cwd, env, TIMEOUT_S)


def _migrate(kind: str, out: Path) -> tuple[subprocess.CompletedProcess, Path]:
    flags = ["--distributed"] if kind == "distributed" else []
    command = [*TORCHPORT, "migrate", str(PROJECT_DIR), "-o", str(out), *flags, "--target", "cpu", "--quiet"]
    return _execute(command, out.parent, dict(os.environ)), out


def _command(name: str, mode: str, migrated: Path, logs: Path) -> list[str]:
    args = [a.replace("{port}", str(_free_port())) for a in PROJECTS[name].args]
    torchrun = [TORCHRUN, "--standalone", "--nproc_per_node", str(RANKS), "--log-dir", str(logs), "--tee", "3"]
    original, output = str(PROJECT_DIR / f"{name}.py"), str(migrated / f"{name}.py")
    return {
        "reference": [*TORCHPORT, "run", "--target", "cpu", original, *args],
        "migrated-torchrun": [*torchrun, output, *args],
        "migrated-python": [sys.executable, output, *args],
        "plain-python": [sys.executable, output, *args],
        "run-torchrun": [*torchrun, "-m", "torchport", "run", "--distributed", "--target", "cpu", original, *args],
    }[mode]


def _per_process(run_dir: Path, stem: str) -> list[Path]:
    """The files of one hook, one per process that wrote one (".<pid>"), oldest process first."""
    return sorted(run_dir.glob(f"{stem}.*"), key=lambda p: int(p.suffix[1:]))


def _seen(path: Path) -> list[tuple[int, list[int]]]:
    steps = []
    for line in path.read_text().splitlines():
        epoch, *indices = map(int, line.split())
        steps.append((epoch, indices))
    return steps


def _saves(run_dir: Path, work: Path) -> list[tuple[str, str]]:
    log = run_dir / "saves.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(rank, os.path.relpath(path, work)) for rank, _pid, path in (line.split(" ", 2) for line in lines)]


def _rank_stdouts(logs: Path) -> list[str]:
    """torchrun's per-rank stdout logs (<log-dir>/<run id>/attempt_<n>/<local rank>/stdout.log)."""
    found = {int(p.parent.name): p.read_text() for p in logs.glob("*/attempt_*/*/stdout.log")}
    return [found.get(rank, "") for rank in range(RANKS)]


def _run(name: str, mode: str, migrations: dict, tmp: Path) -> Run:
    if mode in MIGRATIONS:
        result, migrated = migrations[MIGRATIONS[mode]].result()  # the migrations run while the references do
        if result.returncode != 0:
            return Run(result, [result.stdout], [], [], [])
    else:
        migrated = None
    for attempt in ATTEMPTS:  # (a launch that failed on its own, not on the script, is tried again: _torchrun)
        run_dir = tmp / f"{name}-{mode}" / f"attempt{attempt}"
        work, logs = run_dir / "work", run_dir / "logs"
        work.mkdir(parents=True)
        result = _execute(_command(name, mode, migrated or run_dir, logs), work, _env(run_dir))
        if result.returncode == 0 or mode not in LAUNCHED or not transient(result.stderr):
            break
    stdouts = _rank_stdouts(logs) if mode in LAUNCHED else [result.stdout]
    seen = [_seen(p) for p in _per_process(run_dir, "seen")]
    weights = [json.loads(p.read_text()) for p in _per_process(run_dir, "weights")]
    return Run(result, stdouts, seen, weights, _saves(run_dir, work))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str], Run]:
    """Every (project, mode) run, two at a time; the migrations first, then the references."""
    tmp = tmp_path_factory.mktemp("distributed")
    with ThreadPoolExecutor(max_workers=2) as pool:
        migrations = {}
        for kind in sorted(set(MIGRATIONS.values())):
            (tmp / kind).mkdir()
            migrations[kind] = pool.submit(_migrate, kind, tmp / kind / "out")
        order = sorted(CASES, key=lambda case: case[1] != "reference")
        done = {case: pool.submit(_run, *case, migrations, tmp) for case in order}
        return {case: job.result() for case, job in done.items()}


def _story(run: Run) -> str:
    result = run.result
    ranks = "".join(f"\n--- rank {r} stdout\n{out[-1500:]}" for r, out in enumerate(run.stdouts) if len(run.stdouts) > 1)
    return f"{' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}{ranks}"


def _final_line(stdout: str) -> str:
    lines = stdout.strip().splitlines()
    return lines[-1] if lines else ""


def _progress(name: str, stdout: str) -> list[str]:
    pattern = re.compile(PROJECTS[name].progress)
    return [line for line in stdout.splitlines() if pattern.match(line)]


def _relative_difference(got: list, want: list) -> float:
    """|got - want| / |want| over one tensor's values (|want| 0: the absolute difference)."""
    got_values, want_values = _flat(got), _flat(want)
    assert len(got_values) == len(want_values)
    difference = math.sqrt(sum((g - w) ** 2 for g, w in zip(got_values, want_values)))
    norm = math.sqrt(sum(w * w for w in want_values))
    return difference / norm if norm else difference


def _flat(value) -> list[float]:
    return [v for item in value for v in _flat(item)] if isinstance(value, list) else [float(value)]


def _weight_mismatches(got: dict, want: dict) -> dict[str, float]:
    """The tensors of `got` further than the tolerance from `want` (a missing or extra name: inf)."""
    far = {name: math.inf for name in set(got) ^ set(want)}
    for name in set(got) & set(want):
        difference = _relative_difference(got[name], want[name])
        if not difference <= RELATIVE_TOLERANCE:
            far[name] = difference
    return far


def _by_epoch(steps: list[tuple[int, list[int]]]) -> dict[int, list[int]]:
    epochs: dict[int, list[int]] = {}
    for epoch, indices in steps:
        epochs.setdefault(epoch, []).extend(indices)
    return epochs


@pytest.mark.parametrize("name", PROJECTS)
def test_the_reference_run_trains_prints_progress_and_saves(runs, name):
    """What the other modes are held to is there: one process's seen samples, weights, progress, saves."""
    run = runs[(name, "reference")]
    assert len(run.seen) == len(run.weights) == 1 and run.weights[0], _story(run)
    assert _progress(name, run.stdouts[0]) and run.saves, _story(run)


def test_every_project_is_there():
    assert sorted(p.stem for p in PROJECT_DIR.glob("*.py")) == sorted(PROJECTS)


def test_the_projects_do_not_train_here_as_they_are(tmp_path):
    """Without torchport they do not reach their final line here (no GPU, no NCCL; the spawn
    trainer starts no process): what the modes run is their CUDA path. The one with a CPU fallback
    shuffles only on the GPU, which the shuffling checks below tell apart."""
    for name, project in ((n, p) for n, p in PROJECTS.items() if not p.cpu_fallback):
        args = [a.replace("{port}", str(_free_port())) for a in project.args]
        result = _execute([sys.executable, str(PROJECT_DIR / f"{name}.py"), *args], tmp_path, _env(tmp_path))
        assert not _final_line(result.stdout).startswith("FINAL "), (name, _story(Run(result, [], [], [], [])))
        assert not list(tmp_path.glob("seen.*")), name


@pytest.mark.parametrize("name, mode", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_the_project_reaches_its_final_line_on_rank_0(runs, name, mode):
    run = runs[(name, mode)]
    assert run.result.returncode == 0, _story(run)
    assert "Traceback" not in run.result.stderr, _story(run)
    assert _final_line(run.stdouts[0]).startswith("FINAL "), _story(run)


@pytest.mark.parametrize("name, mode", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_every_sample_is_seen_once_per_epoch_across_the_processes(runs, name, mode):
    run, reference = runs[(name, mode)], runs[(name, "reference")]
    processes = RANKS if mode in LAUNCHED else 1
    assert len(run.seen) == processes, f"{len(run.seen)} processes trained, expected {processes}\n{_story(run)}"
    want = _by_epoch(reference.seen[0])
    size = len(next(iter(want.values())))
    epochs = [_by_epoch(steps) for steps in run.seen]
    assert all(sorted(e) == sorted(want) for e in epochs), (epochs, _story(run))
    for epoch in want:
        shares = [e[epoch] for e in epochs]
        assert sorted(i for share in shares for i in share) == list(range(size)), (epoch, shares)
        assert all(len(share) == size // processes for share in shares), (epoch, shares)


@pytest.mark.parametrize("name, mode", COMPARED, ids=[f"{n}-{m}" for n, m in COMPARED])
def test_the_weights_match_the_single_process_run(runs, name, mode):
    run, reference = runs[(name, mode)], runs[(name, "reference")]
    assert run.weights and reference.weights, _story(run)
    want = reference.weights[0]
    if PROJECTS[name].shuffled and mode in LAUNCHED:
        want = run.weights[0]  # another order than one process's: its ranks agree with each other
    far = [_weight_mismatches(got, want) for got in run.weights]
    assert not any(far), f"per process, the tensors beyond {RELATIVE_TOLERANCE} relative: {far}\n{_story(run)}"


@pytest.mark.parametrize("name, mode", [(n, m) for n, p in PROJECTS.items() if p.shuffled for m in sorted(LAUNCHED)])
def test_a_shuffled_loader_draws_a_new_order_each_epoch_on_every_rank(runs, name, mode):
    """The reference draws a new order each epoch; so does each rank, when set_epoch is called."""
    run = runs[(name, mode)]
    reference = list(_by_epoch(runs[(name, "reference")].seen[0]).values())
    assert len(reference) > 1 and all(a != b for a, b in zip(reference, reference[1:])), reference
    for steps in run.seen:
        epochs = list(_by_epoch(steps).values())
        assert len(epochs) == len(reference) and all(a != b for a, b in zip(epochs, epochs[1:])), epochs


@pytest.mark.parametrize("name, mode", COMPARED, ids=[f"{n}-{m}" for n, m in COMPARED])
def test_only_rank_0_prints_progress(runs, name, mode):
    run, reference = runs[(name, mode)], runs[(name, "reference")]
    want = _progress(name, reference.stdouts[0])
    assert want, _story(reference)
    assert len(_progress(name, run.stdouts[0])) == len(want), _story(run)
    others = {rank: _progress(name, out) for rank, out in enumerate(run.stdouts) if rank}
    assert not any(others.values()), others


@pytest.mark.parametrize("name, mode", COMPARED, ids=[f"{n}-{m}" for n, m in COMPARED])
def test_only_rank_0_saves_what_the_single_process_run_saved(runs, name, mode):
    run, reference = runs[(name, mode)], runs[(name, "reference")]
    want = Counter(path for _, path in reference.saves)
    assert want, _story(reference)
    assert Counter(path for _, path in run.saves) == want, (run.saves, _story(run))
    if mode in LAUNCHED:
        assert {rank for rank, _ in run.saves} == {"0"}, run.saves
