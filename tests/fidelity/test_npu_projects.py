"""NPU pattern projects (#26's "Done when"): training scripts written for Ascend the way ModelZoo
writes them (npu_projects/projects/) train after torchport has moved them as the same script
written by hand for the CPU trains (npu_projects/references/, the twins: same seed, data, steps).

  npu_transformer  torch_npu throughout: set_device(LOCAL_RANK), "npu:{rank}", `.to(loc)`/`.npu()`,
                   set_compile_mode, npu_format_cast, npu_rms_norm, npu_fusion_attention (BNSD),
                   NpuFusedSGD, torch.npu.amp autocast + GradScaler, hccl, DDP(device_ids=...) with a
                   DistributedSampler, the global batch divided among the processes
  transfer_cuda    CUDA code behind `from torch_npu.contrib import transfer_to_npu`

Modes: migrate-cpu and migrate-accelerator (`torchport migrate --from npu --target ...`, then the
output), run-cpu (`torchport run --target cpu`, the script unmodified: the stand-in torch_npu);
npu_transformer also under `torchrun --standalone --nproc_per_node 2` (migrate-cpu and run-cpu),
its global batch shared by the two processes. One process runs on a CPU that computes bfloat16
natively (tests/cpu_bf16), where autocast is on in the twin as in the cpu target's output; two on
one that does not, where it is off. A run passes when it reaches its FINAL line and each step's
loss is within 1e-4 relative of the twin's (one process), and npu_transformer's final weights,
every process's, as well. The migrated text is checked too: no torch_npu import and no `.npu(` call
left.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from test_apex_projects import NATIVE, TORCHPORT, TORCHRUN, TWO_RANKS, _env, _execute, _final_line, _story
from test_distributed_projects import RELATIVE_TOLERANCE, _per_process, _weight_mismatches

pytestmark = pytest.mark.fidelity  # `make fidelity`: too many processes for the unit suite's budget

HERE = Path(__file__).resolve().parent / "npu_projects"
PROJECT_DIR, TWIN_DIR = HERE / "projects", HERE / "references"
LOSS = re.compile(r"\bLoss (-?[0-9.]+(?:e[-+]?\d+)?|nan|inf)\b")
NPU_MODULE = "torch_npu"


class Project(NamedTuple):
    args: tuple[str, ...] = ()  # its command line in every mode (--amp: its mixed-precision path)
    launched: bool = False  # also under torchrun, two processes
    weights: bool = False  # writes its final weights (PROJECT_WEIGHTS)


PROJECTS = {
    "npu_transformer": Project(args=("--amp",), launched=True, weights=True),
    "transfer_cuda": Project(),
}

# mode: (what runs, under torchrun)
MODES = {
    "migrate-cpu": ("cpu", False),
    "migrate-accelerator": ("accelerator", False),
    "run-cpu": ("run", False),
    "migrate-cpu-torchrun": ("cpu", True),
    "run-cpu-torchrun": ("run", True),
}
RUNNERS = {"twin": ("twin", False), **MODES}
MIGRATIONS = ("cpu", "accelerator")  # the --target of each `migrate --from npu`
# One process runs on the CPU with native bfloat16, where autocast is on; two on the one without,
# where it is off: each gate both ways, and the two processes held to the twin's one (with autocast
# on, bfloat16's rounding depends on the per-process batch: 5e-4 relative apart after 32 steps).
CPU_OF = {False: "bf16", True: "no-bf16"}  # by launched
CASES = [(name, mode, CPU_OF[launched]) for name, p in PROJECTS.items() for mode, (_, launched) in MODES.items()
         if p.launched or not launched]
TWINS = sorted({(name, "twin", cpu) for name, _, cpu in CASES})
RUNS = TWINS + CASES


class Run(NamedTuple):
    result: subprocess.CompletedProcess
    weights: list[dict[str, list]]  # each training process's final weights


def _ids(cases) -> list[str]:
    return ["-".join(case) for case in cases]


def _migrate(target: str, out: Path) -> tuple[subprocess.CompletedProcess, Path]:
    command = [*TORCHPORT, "migrate", str(PROJECT_DIR), "-o", str(out), "--from", "npu", "--target", target, "--quiet"]
    return _execute(command, out.parent, _env(False)), out


def _command(name: str, mode: str, script: Path) -> list[str]:
    what, launched = RUNNERS[mode]
    args = PROJECTS[name].args
    if what == "run":
        launcher = ["-m", "torch.distributed.run", *TWO_RANKS] if launched else []
        return [*TORCHPORT, "run", "--target", "cpu", *launcher, str(script), *args]
    return [*([TORCHRUN, *TWO_RANKS] if launched else [sys.executable]), str(script), *args]


def _run(name: str, mode: str, cpu: str, migrations: dict, cwd: Path) -> Run:
    what, _ = RUNNERS[mode]
    script = (TWIN_DIR if what == "twin" else PROJECT_DIR) / f"{name}.py"
    if what in MIGRATIONS:
        migration, out = migrations[what].result()  # the migrations run while the twins do
        if migration.returncode != 0:
            return Run(migration, [])
        script = out / f"{name}.py"
    env = _env(NATIVE[cpu])
    env["PROJECT_WEIGHTS"] = str(cwd / "weights")
    result = _execute(_command(name, mode, script), cwd, env)
    return Run(result, [json.loads(p.read_text()) for p in _per_process(cwd, "weights")])


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> tuple[dict, dict, dict]:
    """(every migration, every run, each project run as it is), two processes at a time: the
    migrations first, then the twins, then the rest."""
    tmp = tmp_path_factory.mktemp("npu")
    with ThreadPoolExecutor(max_workers=2) as pool:
        migrations = {}
        for target in MIGRATIONS:
            (tmp / target).mkdir()
            migrations[target] = pool.submit(_migrate, target, tmp / target / "out")
        cwds = {run: tmp / "-".join(run) for run in RUNS}
        for cwd in cwds.values():
            cwd.mkdir()
        done = {run: pool.submit(_run, *run, migrations, cwds[run]) for run in RUNS}
        as_is = {name: pool.submit(_execute, [sys.executable, str(PROJECT_DIR / f"{name}.py")], tmp, _env(True))
                 for name in PROJECTS}
        return ({target: job.result() for target, job in migrations.items()},
                {run: job.result() for run, job in done.items()},
                {name: job.result() for name, job in as_is.items()})


@pytest.fixture(scope="module")
def migrations(outcome) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    return outcome[0]


@pytest.fixture(scope="module")
def runs(outcome) -> dict[tuple[str, str, str], Run]:
    return outcome[1]


def _losses(result: subprocess.CompletedProcess) -> list[float]:
    """Every step's loss, as rank 0 printed them."""
    return [float(value) for value in LOSS.findall(result.stdout)]


def _npu_leftovers(source: str) -> list[str]:
    """torch_npu's imports (torch_npu, torch_npu.*) and `.npu(` calls in the source, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"import {n}" for n in names if n == NPU_MODULE or n.startswith(NPU_MODULE + ".")]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "npu":
            found.append(f"line {node.lineno}: .npu(")
    return found


def test_every_project_is_there_with_its_twin():
    assert sorted(p.stem for p in PROJECT_DIR.glob("*.py")) == sorted(PROJECTS)
    assert sorted(p.stem for p in TWIN_DIR.glob("*.py")) == sorted(PROJECTS)


def test_the_projects_are_written_for_the_npu_and_the_twins_are_not():
    for name in PROJECTS:
        assert _npu_leftovers((PROJECT_DIR / f"{name}.py").read_text()), name
        assert not _npu_leftovers((TWIN_DIR / f"{name}.py").read_text()), name


@pytest.mark.parametrize("name", PROJECTS)
def test_the_project_does_not_run_here_as_it_is(outcome, name):
    """No torch_npu here: what the modes run is the NPU code, not a fallback of its own."""
    result = outcome[2][name]
    assert result.returncode != 0 and "No module named 'torch_npu'" in result.stderr, _story(result)


@pytest.mark.parametrize("name, mode, cpu", TWINS, ids=_ids(TWINS))
def test_the_twin_trains_with_autocast_exactly_where_the_cpu_computes_bfloat16(runs, name, mode, cpu):
    result = runs[(name, mode, cpu)].result
    assert result.returncode == 0 and _final_line(result).startswith("FINAL "), _story(result)
    assert f"autocast={NATIVE[cpu]}" in _final_line(result).split(), _story(result)
    assert _losses(result), _story(result)


def test_autocast_on_the_cpu_moves_the_loss_beyond_the_tolerance(runs):
    """What makes the CPU with native bfloat16 worth running on: a mode whose autocast region is
    missing or misplaced there ends further from its twin than the tolerance."""
    name = next(n for n, p in PROJECTS.items() if p.launched)
    on, off = (_losses(runs[(name, "twin", cpu)].result)[-1] for cpu in ("bf16", "no-bf16"))
    assert abs(on - off) > 2 * RELATIVE_TOLERANCE * abs(off), (on, off)


@pytest.mark.parametrize("name, mode, cpu", CASES, ids=_ids(CASES))
def test_the_project_reaches_its_final_line(runs, name, mode, cpu):
    result = runs[(name, mode, cpu)].result
    assert result.returncode == 0, _story(result)
    assert _final_line(result).startswith("FINAL "), _story(result)
    assert "Traceback" not in result.stderr, _story(result)


@pytest.mark.parametrize("name, mode, cpu", CASES, ids=_ids(CASES))
def test_every_step_loss_matches_the_twin(runs, name, mode, cpu):
    result, twin = runs[(name, mode, cpu)].result, runs[(name, "twin", cpu)].result
    want, got = _losses(twin), _losses(result)
    assert want, _story(twin)
    assert len(got) == len(want), f"{len(got)} steps printed, the twin {len(want)}\n{_story(result)}"
    far = {step: (g, w) for step, (g, w) in enumerate(zip(got, want)) if not abs(g - w) <= RELATIVE_TOLERANCE * abs(w)}
    assert not far, f"steps beyond {RELATIVE_TOLERANCE} relative (got, twin): {far}\n{_story(result)}"


WEIGHED = [case for case in CASES if PROJECTS[case[0]].weights]


@pytest.mark.parametrize("name, mode, cpu", WEIGHED, ids=_ids(WEIGHED))
def test_the_final_weights_of_every_process_match_the_twin(runs, name, mode, cpu):
    run, twin = runs[(name, mode, cpu)], runs[(name, "twin", cpu)]
    assert twin.weights, _story(twin.result)
    assert len(run.weights) == (2 if MODES[mode][1] else 1), _story(run.result)
    far = [_weight_mismatches(got, twin.weights[0]) for got in run.weights]
    assert not any(far), f"per process, the tensors beyond {RELATIVE_TOLERANCE} relative: {far}\n{_story(run.result)}"


MIGRATED_TEXT = [(target, name) for target in MIGRATIONS for name in PROJECTS]


@pytest.mark.parametrize("target, name", MIGRATED_TEXT, ids=_ids(MIGRATED_TEXT))
def test_the_migrated_script_imports_no_torch_npu_and_calls_no_npu_method(migrations, target, name):
    result, out = migrations[target]
    assert result.returncode == 0, _story(result)
    source = (out / f"{name}.py").read_text()
    assert not _npu_leftovers(source), _npu_leftovers(source)
