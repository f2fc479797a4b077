"""Pattern projects: CUDA training scripts written the way public projects write them run to their
final line after torchport has moved them, in every mode.

Each file in projects/ is one small, self-contained script in one well-known style (nanoGPT config
globals, PyTorch-GAN legacy tensor types, timm AMP variables, ...). Modes:

  original             the script as it is, with its own CPU switch (only projects marked to run so)
  migrate-cpu          `torchport migrate --target cpu`, then the migrated script
  migrate-accelerator  `torchport migrate --target accelerator`, then the migrated script
  run-cpu              `torchport run --target cpu`, the script unmodified
  env-cpu              TORCHPORT_TARGET=cpu, the script unmodified

Every mode but "original" runs the script on its CUDA path (with its defaults, or its own switch to
the GPU such as `--cuda`): that is what the tool has to move. A run passes when it exits 0, its last
stdout line starts with "FINAL " and its stderr holds no traceback. Two tests keep the marks honest
(projects marked runnable unmodified run here as they are, the others fail here for want of CUDA),
and one checks that code which already ran on the CPU, with its own CPU switch, still runs after
migration.

A script's own check that a GPU is there (`assert torch.cuda.is_available()`, `if args.cuda and not
torch.cuda.is_available(): raise ...`) asks about the accelerator on `--target accelerator`, after
`migrate` as under `run`; on this CPU-only machine it refuses the run, as its author meant. A project
names the modes where it does so, with what it says; those runs must refuse, with that message.
Two modes are run only for the projects that name them: run-accelerator (`torchport run --target
accelerator`) and "<mode>+cpu-args" (a mode with the project's CPU switch instead of its GPU one).

A project written for Python before 3.7 (`x.cuda(async=True)`) is not valid Python here until it
is migrated: its unmodified modes must end in one clear line that says so, never a traceback.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

pytestmark = pytest.mark.fidelity  # `make fidelity`: too many processes for the unit suite's budget

PROJECT_DIR = Path(__file__).resolve().parent / "projects"
BIN = Path(sys.executable).parent
TORCHPORT = [str(BIN / "torchport")] if (BIN / "torchport").exists() else [sys.executable, "-m", "torchport.cli"]
TORCHRUN = shutil.which("torchrun", path=str(BIN)) or "torchrun"
TWO_RANKS = ["--standalone", "--nproc_per_node", "2"]
TIMEOUT_S = 180


class Project(NamedTuple):
    cpu_args: tuple[str, ...] = ()  # the script's own switch to the CPU, used in "original" mode
    gpu_args: tuple[str, ...] = ()  # its own switch to its CUDA path (`--cuda`), used in the other modes
    unmodified: bool = False  # runs as it is on this CPU-only machine
    launcher: str = "python"  # "python" (mp.spawn scripts too) or "torchrun" (two ranks)
    # A file the script resumes from, written into each run's working directory as a GPU run
    # saves it (storages tagged "cuda:0"), from the project's checkpoint_of_the_gpu_run().
    gpu_checkpoint: str = ""
    # (mode, what the script says) where its own check that a GPU is there refuses the run here
    refuses: tuple[tuple[str, str], ...] = ()
    pre37: bool = False  # pre-3.7 syntax: python itself refuses it; migrate and `torchport run` run it


PROJECTS = {
    "config_globals": Project(cpu_args=("--device=cpu", "--dtype=float32"), unmodified=True),
    "legacy_tensor_types": Project(unmodified=True),  # takes its CPU path by itself
    "amp_variables": Project(cpu_args=("--no-amp",), unmodified=True),
    "cpu_fallback_pinned": Project(cpu_args=("--no-cuda",), unmodified=True),
    "gpu_only": Project(refuses=(("migrate-accelerator", "this script needs a CUDA GPU"),)),
    "legacy_dtype_gpu_only": Project(),
    "ddp_rank_in_self": Project(launcher="torchrun"),
    "device_count_ranks": Project(launcher="torchrun"),
    "ddp_tutorial": Project(launcher="torchrun", gpu_args=("--local_world_size", "2")),
    "jit_helper": Project(unmodified=True),
    "stream_prefetcher": Project(),
    "syncbn_spawn": Project(),
    "spawn_trainer": Project(gpu_args=("--multiprocessing-distributed", "--world-size", "1", "--rank", "0")),
    "device_kinds": Project(),
    "event_timing": Project(),
    "gpu_resume": Project(gpu_checkpoint="checkpoint.pth.tar"),
    "gpu_checks": Project(gpu_args=("--cuda",), refuses=(
        ("migrate-accelerator", "No GPU found, please run without --cuda"),
        ("migrate-accelerator+cpu-args", "the benchmark needs a CUDA GPU"),
        ("run-accelerator", "No GPU found, please run without --cuda"),
        ("run-accelerator+cpu-args", "the benchmark needs a CUDA GPU"),
    )),
    "pre37_imagenet": Project(pre37=True),
}

TARGETS = ["cpu", "accelerator"]
MODES = ["original", "migrate-cpu", "migrate-accelerator", "run-cpu", "env-cpu"]
WITH_CPU_ARGS = "+cpu-args"  # a mode run with the project's CPU switch instead of its GPU one
# Python itself reads the file in these: pre-3.7 code never starts there.
PYTHON_READS_MODES = ["original", "env-cpu"]
# The migrated CPU script again, with the project's own CPU switch ("code that ran on the CPU still does").
CPU_ARGS_AFTER_MIGRATION = "migrate-cpu" + WITH_CPU_ARGS

REFUSALS = [(name, mode, message) for name, p in PROJECTS.items() for mode, message in p.refuses]
CASES = [
    (name, mode) for name, p in PROJECTS.items() for mode in MODES
    if (mode != "original" or p.unmodified) and mode not in dict(p.refuses)
    and not (p.pre37 and mode in PYTHON_READS_MODES)
]
PRE37 = [(name, mode) for name, p in PROJECTS.items() if p.pre37 for mode in PYTHON_READS_MODES]
# "original" for every project: the marks are checked too.
RUNS = [(name, mode) for name in PROJECTS for mode in MODES]
RUNS += [(name, CPU_ARGS_AFTER_MIGRATION) for name, p in PROJECTS.items() if p.unmodified and p.cpu_args]
RUNS += [(name, mode) for name, mode, _ in REFUSALS if (name, mode) not in RUNS]


def _env(mode: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TORCHPORT_TARGET", None)
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    if mode == "env-cpu":
        env["TORCHPORT_TARGET"] = "cpu"
    return env


def _execute(command: list[str], cwd: Path, mode: str) -> subprocess.CompletedProcess:
    """Run a command; a run past the time limit comes back as a failed run, not as an error."""
    try:
        return subprocess.run(command, cwd=cwd, env=_env(mode), capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as late:
        out = late.stdout.decode() if isinstance(late.stdout, bytes) else late.stdout or ""
        return subprocess.CompletedProcess(command, 124, out, f"timed out after {TIMEOUT_S} s")


def _migrate(target: str, out: Path) -> subprocess.CompletedProcess:
    command = [*TORCHPORT, "migrate", str(PROJECT_DIR), "-o", str(out), "--target", target, "--quiet"]
    return _execute(command, out.parent, "migrate")


def _command(name: str, mode: str, script: Path) -> list[str]:
    project = PROJECTS[name]
    args = list(project.cpu_args if mode == "original" or mode.endswith(WITH_CPU_ARGS) else project.gpu_args)
    ranks = project.launcher == "torchrun"
    if mode.startswith("run-"):  # run-cpu, run-accelerator
        module = ["-m", "torch.distributed.run", *TWO_RANKS] if ranks else []
        target = mode.removeprefix("run-").removesuffix(WITH_CPU_ARGS)
        return [*TORCHPORT, "run", "--target", target, *module, str(script), *args]
    launch = [TORCHRUN, *TWO_RANKS] if ranks else [sys.executable]
    return [*launch, str(script), *args]


def _run(name: str, mode: str, migrations: dict, cwd: Path) -> subprocess.CompletedProcess:
    target = {"migrate-cpu": "cpu", "migrate-accelerator": "accelerator"}.get(mode.removesuffix(WITH_CPU_ARGS))
    script = PROJECT_DIR / f"{name}.py"
    if target:
        migration, out = migrations[target]
        if migration.returncode != 0:
            return migration
        script = out / f"{name}.py"
    return _execute(_command(name, mode, script), cwd, mode)


def _write_gpu_checkpoint(name: str, cwd: Path, save_on_gpu) -> None:
    """The checkpoint project `name` resumes from, as its GPU run saved it, in `cwd`."""
    spec = importlib.util.spec_from_file_location(f"project_{name}", PROJECT_DIR / f"{name}.py")
    project = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(project)
    save_on_gpu(project.checkpoint_of_the_gpu_run(), cwd / PROJECTS[name].gpu_checkpoint)


@pytest.fixture(scope="module")
def migrations(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    """target -> (the migration of every project, its output folder), both targets at once."""
    outs = {target: tmp_path_factory.mktemp(f"migrated-{target}") / "out" for target in TARGETS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {target: pool.submit(_migrate, target, out) for target, out in outs.items()}
        return {target: (jobs[target].result(), outs[target]) for target in TARGETS}


@pytest.fixture(scope="module")
def runs(migrations, tmp_path_factory, save_on_gpu) -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """Every (project, mode) run, two at a time."""
    cwds = {case: tmp_path_factory.mktemp(f"{case[0]}-{case[1]}") for case in RUNS}
    for (name, _), cwd in cwds.items():
        if PROJECTS[name].gpu_checkpoint:
            _write_gpu_checkpoint(name, cwd, save_on_gpu)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = {case: pool.submit(_run, *case, migrations, cwds[case]) for case in RUNS}
        return {case: job.result() for case, job in done.items()}


def _final_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def _reached_final_line(result: subprocess.CompletedProcess) -> bool:
    return result.returncode == 0 and _final_line(result).startswith("FINAL ") and "Traceback" not in result.stderr


def _story(result: subprocess.CompletedProcess) -> str:
    return f"{' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout[-1500:]}\n{result.stderr[-3000:]}"


def test_a_gpu_checkpoint_does_not_load_here_as_it_is(tmp_path, save_on_gpu):
    import torch

    for name in (n for n, p in PROJECTS.items() if p.gpu_checkpoint):
        _write_gpu_checkpoint(name, tmp_path, save_on_gpu)
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(tmp_path / PROJECTS[name].gpu_checkpoint)


def test_every_project_is_there_and_the_marks_cover_every_kind():
    assert sorted(p.stem for p in PROJECT_DIR.glob("*.py")) == sorted(PROJECTS)
    assert {p.unmodified for p in PROJECTS.values()} == {True, False}
    assert {p.launcher for p in PROJECTS.values()} == {"python", "torchrun"}


@pytest.mark.parametrize("name, mode", CASES, ids=[f"{name}-{mode}" for name, mode in CASES])
def test_the_project_runs_to_its_final_line(runs, name, mode):
    result = runs[(name, mode)]
    assert result.returncode == 0, _story(result)
    assert _final_line(result).startswith("FINAL "), _story(result)
    assert "Traceback" not in result.stderr, _story(result)


def test_the_projects_marked_runnable_unmodified_run_on_this_cpu_as_they_are(runs):
    failed = {n: _story(runs[(n, "original")]) for n, p in PROJECTS.items() if p.unmodified}
    failed = {n: story for n, story in failed.items() if not _reached_final_line(runs[(n, "original")])}
    assert not failed, failed


def test_the_projects_not_marked_runnable_unmodified_fail_here_for_want_of_cuda(runs):
    for name in (n for n, p in PROJECTS.items() if not p.unmodified and not p.pre37):
        result = runs[(name, "original")]
        assert not _reached_final_line(result), f"{name} runs unmodified: mark it so\n{_story(result)}"
        assert re.search(r"cuda|nccl|gpu", result.stderr, re.IGNORECASE), _story(result)


@pytest.mark.parametrize("name, mode", PRE37, ids=[f"{name}-{mode}" for name, mode in PRE37])
def test_pre37_code_is_refused_by_python_itself_without_a_traceback(runs, name, mode):
    """(the script never starts: its SyntaxError; `torchport run` runs it, renamed in memory, and
    migrate writes it renamed: those are among the CASES that reach their final line)"""
    result = runs[(name, mode)]
    assert result.returncode != 0 and "Traceback" not in result.stderr, _story(result)
    assert "SyntaxError" in result.stderr, _story(result)


UNMODIFIED = [n for n, p in PROJECTS.items() if p.unmodified]


@pytest.mark.parametrize("name", UNMODIFIED)
def test_code_that_already_ran_on_the_cpu_still_runs_after_migration_with_its_cpu_switch(runs, name):
    # Without CPU arguments the command is the migrate-cpu one, already run.
    result = runs.get((name, CPU_ARGS_AFTER_MIGRATION)) or runs[(name, "migrate-cpu")]
    assert _reached_final_line(result), _story(result)


@pytest.mark.parametrize("name, mode, message", REFUSALS, ids=[f"{name}-{mode}" for name, mode, _ in REFUSALS])
def test_the_scripts_own_gpu_check_refuses_the_run_where_there_is_no_accelerator(runs, name, mode, message):
    """On `--target accelerator`, migrated or run, the check asks about the accelerator: this
    machine has none, so the script stops with its own error, before its final line."""
    result = runs[(name, mode)]
    assert result.returncode != 0, _story(result)
    assert not any(line.startswith("FINAL ") for line in result.stdout.splitlines()), _story(result)
    assert re.search(rf"^\w+: {re.escape(message)}$", result.stderr, re.MULTILINE), _story(result)  # (its exception)


def test_the_gpu_checks_stay_in_the_accelerator_migration_and_ask_about_the_accelerator(migrations):
    migration, out = migrations["accelerator"]
    assert migration.returncode == 0, _story(migration)
    migrated = (out / "gpu_checks.py").read_text()
    assert 'if opt.cuda and not torch.accelerator.is_available():\n    raise Exception("No GPU found' in migrated
    assert 'assert torch.accelerator.is_available(), "the benchmark needs a CUDA GPU"' in migrated
