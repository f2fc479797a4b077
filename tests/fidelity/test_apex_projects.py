"""apex pattern projects (#23's "Done when"): training scripts written for NVIDIA apex in the
styles public projects use (apex_projects/projects/) train after torchport has moved them as the
same script written by hand with torch.amp for the CPU trains (apex_projects/references/: same
seed, same data).

  plain_o1            apex's README loop: amp.initialize O1, `with amp.scale_loss(...)`
  o2_clip_checkpoint  O2, clipping through amp.master_params, `'amp': amp.state_dict()` saved and resumed
  optional_apex       timm's `has_apex` with a native torch.cuda.amp fallback, `--amp`
  helper_functions    an `amp_backward(loss, optimizer)` helper and timm's ApexScaler class
  apex_ddp_syncbn     apex's imagenet example: convert_syncbn_model, apex DDP, torchrun, two processes
  fused_optimizers    apex.optimizers.FusedAdam and FusedLAMB, two models through one amp.initialize

Modes: migrate-cpu and migrate-accelerator (`torchport migrate --target ...`, then the output),
run-cpu (`torchport run --target cpu`, the script unmodified: the stand-in apex package), and the
reference itself; the torchrun project in every mode under `torchrun --standalone --nproc_per_node
2`. Each mode runs on a CPU that computes bfloat16 natively (tests/cpu_bf16), where autocast
is on, in the reference as in the cpu target's output; plain_o1 also on one that does not, where
it is off. A run passes when it reaches its FINAL line and each loss on it is within 1e-3
relative of the reference's. The migrated text is checked too: no `apex` import left on cpu and
accelerator (natively converted, or pointed at torchport.compat.apex with a TP307 row); the npu
target keeps what Ascend's apex has, and `--apex native` on npu leaves none.
"""

from __future__ import annotations

import ast
import csv
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from _processes import execute

import native_bf16  # tests/cpu_bf16 (on sys.path: tests/conftest.py)
from torchport.apis.apex import ASCEND_APEX, in_build

pytestmark = pytest.mark.fidelity  # `make fidelity`: too many processes for the unit suite's budget

# Not "apex": pytest puts tests/fidelity on sys.path, where a folder named apex is importable as a
# namespace package, and `import apex` would no longer fail (the stand-in is served only then).
HERE = Path(__file__).resolve().parent / "apex_projects"
PROJECT_DIR, REFERENCE_DIR = HERE / "projects", HERE / "references"
BIN = Path(sys.executable).parent
TORCHPORT = [str(BIN / "torchport")] if (BIN / "torchport").exists() else [sys.executable, "-m", "torchport.cli"]
TORCHRUN = shutil.which("torchrun", path=str(BIN)) or "torchrun"
TWO_RANKS = ["--standalone", "--nproc_per_node", "2"]
TIMEOUT_S = 120  # a run takes 3-10 s; a hung process group waits for this
RELATIVE_TOLERANCE = 1e-3
COMPAT_MODULE = "torchport.compat.apex"
COMPAT_CODE = "TP307"
NATIVE = {"bf16": True, "no-bf16": False}  # the CPU computes bfloat16 natively, or not
BOTH_WAYS = tuple(NATIVE)


class Project(NamedTuple):
    args: tuple[str, ...] = ()  # its command line in every mode (its apex path: `--amp` where it has one)
    torchrun: bool = False  # launched with two processes
    # The CPUs it runs on, in every mode: the one where autocast is on (where a misplaced autocast
    # region shows), and for plain_o1 also the one where it is off: each mode's gate (the cpu and
    # accelerator targets' in the migrated text, the stand-in's under run) both ways, within the
    # file's budget (about 3.7 CPU-s a run, 9 under torchrun).
    cpus: tuple[str, ...] = ("bf16",)


PROJECTS = {
    "plain_o1": Project(cpus=BOTH_WAYS),
    "o2_clip_checkpoint": Project(),
    "optional_apex": Project(args=("--amp",)),
    "helper_functions": Project(),
    "apex_ddp_syncbn": Project(args=("--sync_bn",), torchrun=True),
    "fused_optimizers": Project(args=("--amp",)),
    "multi_tensor_ddp": Project(torchrun=True),
}
# Projects that train the same model on the same data the same way: their references agree.
SAME_TRAINING = ("plain_o1", "optional_apex")

MODES = ["migrate-cpu", "migrate-accelerator", "run-cpu"]
MIGRATED = {"migrate-cpu": "cpu", "migrate-accelerator": "accelerator"}
# (name, target, flags): the runnable migrations, and the npu ones, which are read, not run
MIGRATIONS = {"cpu": ("cpu", ()), "accelerator": ("accelerator", ()), "npu": ("npu", ()),
              "npu-native": ("npu", ("--apex", "native"))}
RUNS = [(name, mode, cpu) for name, p in PROJECTS.items() for mode in ["reference", *MODES] for cpu in p.cpus]
CASES = [(name, mode, cpu) for name, mode, cpu in RUNS if mode != "reference"]
LOSS = re.compile(r"\b(loss\w*)=(-?[0-9.]+(?:e[-+]?\d+)?|nan|inf)")


def _ids(cases) -> list[str]:
    return ["-".join(case) for case in cases]


def _env(native: bool) -> dict[str, str]:
    env = native_bf16.environment(native)
    env.pop("TORCHPORT_TARGET", None)
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    return env


def _execute(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return execute(command, cwd, env, TIMEOUT_S)


def _migrate(kind: str, out: Path) -> tuple[subprocess.CompletedProcess, Path]:
    target, flags = MIGRATIONS[kind]
    command = [*TORCHPORT, "migrate", str(PROJECT_DIR), "-o", str(out), "--target", target, *flags, "--quiet"]
    return _execute(command, out.parent, _env(False)), out


def _command(name: str, mode: str, script: Path) -> list[str]:
    project = PROJECTS[name]
    ranks = [TORCHRUN, *TWO_RANKS] if project.torchrun else [sys.executable]
    if mode == "run-cpu":
        launcher = ["-m", "torch.distributed.run", *TWO_RANKS] if project.torchrun else []
        return [*TORCHPORT, "run", "--target", "cpu", *launcher, str(script), *project.args]
    return [*ranks, str(script), *project.args]


def _run(name: str, mode: str, cpu: str, migrations: dict, cwd: Path) -> subprocess.CompletedProcess:
    script = (REFERENCE_DIR if mode == "reference" else PROJECT_DIR) / f"{name}.py"
    if mode in MIGRATED:
        migration, out = migrations[MIGRATED[mode]].result()  # the migrations run while the references do
        if migration.returncode != 0:
            return migration
        script = out / f"{name}.py"
    return _execute(_command(name, mode, script), cwd, _env(NATIVE[cpu]))


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> tuple[dict, dict]:
    """(every migration, every run), two processes at a time: the migrations first, then the
    references, then the rest."""
    tmp = tmp_path_factory.mktemp("apex")
    with ThreadPoolExecutor(max_workers=2) as pool:
        migrations = {}
        for kind in MIGRATIONS:
            (tmp / kind).mkdir()
            migrations[kind] = pool.submit(_migrate, kind, tmp / kind / "out")
        cwds = {run: tmp / "-".join(run) for run in RUNS}
        for cwd in cwds.values():
            cwd.mkdir()
        order = sorted(RUNS, key=lambda run: run[1] != "reference")
        done = {run: pool.submit(_run, *run, migrations, cwds[run]) for run in order}
        return ({kind: job.result() for kind, job in migrations.items()},
                {run: job.result() for run, job in done.items()})


@pytest.fixture(scope="module")
def migrations(outcome) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    return outcome[0]


@pytest.fixture(scope="module")
def runs(outcome) -> dict[tuple[str, str, str], subprocess.CompletedProcess]:
    return outcome[1]


def _story(result: subprocess.CompletedProcess) -> str:
    return f"{' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout[-1500:]}\n{result.stderr[-3000:]}"


def _final_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def _losses(result: subprocess.CompletedProcess) -> dict[str, float]:
    return {key: float(value) for key, value in LOSS.findall(_final_line(result))}


def _apex_imports(source: str) -> list[str]:
    """The modules of apex (apex, apex.*) the source imports, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [n for n in names if n == "apex" or n.startswith("apex.")]
    return found


def _compat_imports(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        found += [n for n in names if n == COMPAT_MODULE or n.startswith(COMPAT_MODULE + ".")]
    return found


def _change_rows(out: Path, name: str) -> list[dict[str, str]]:
    with open(out / "torchport_report" / "change_list.csv", newline="") as table:
        return [row for row in csv.DictReader(table) if Path(row["File"]).name == f"{name}.py"]


def _migrated(migrations: dict, kind: str, name: str) -> tuple[str, Path]:
    result, out = migrations[kind]
    assert result.returncode == 0, _story(result)
    return (out / f"{name}.py").read_text(), out


def test_every_project_is_there_with_its_reference():
    assert sorted(p.stem for p in PROJECT_DIR.glob("*.py")) == sorted(PROJECTS)
    assert sorted(p.stem for p in REFERENCE_DIR.glob("*.py")) == sorted(PROJECTS)


def test_the_projects_are_written_for_apex():
    """What the modes move: every project imports apex."""
    for name in PROJECTS:
        assert _apex_imports((PROJECT_DIR / f"{name}.py").read_text()), name


REFERENCES = [(name, cpu) for name, mode, cpu in RUNS if mode == "reference"]


@pytest.mark.parametrize("name, cpu", REFERENCES, ids=_ids(REFERENCES))
def test_the_reference_trains_with_autocast_exactly_where_the_cpu_computes_bfloat16(runs, name, cpu):
    result = runs[(name, "reference", cpu)]
    assert result.returncode == 0 and _final_line(result).startswith("FINAL "), _story(result)
    assert f"autocast={NATIVE[cpu]}" in _final_line(result).split(), _story(result)
    assert _losses(result), _story(result)


@pytest.mark.parametrize("cpu", sorted(set.intersection(*(set(PROJECTS[n].cpus) for n in SAME_TRAINING))))
def test_the_references_of_the_same_training_agree(runs, cpu):
    losses = [_losses(runs[(name, "reference", cpu)]) for name in SAME_TRAINING]
    assert losses[0] and all(other == losses[0] for other in losses), losses


def test_autocast_on_the_cpu_moves_the_loss_beyond_the_tolerance(runs):
    """What makes the CPU with native bfloat16 worth running on: a mode whose autocast region is
    missing or misplaced there ends further from the reference than the tolerance."""
    name = next(n for n, p in PROJECTS.items() if set(p.cpus) == set(NATIVE))
    on, off = (_losses(runs[(name, "reference", cpu)])["loss"] for cpu in ("bf16", "no-bf16"))
    assert abs(on - off) > 2 * RELATIVE_TOLERANCE * abs(off), (on, off)


@pytest.mark.parametrize("name, mode, cpu", CASES, ids=_ids(CASES))
def test_the_project_reaches_its_final_line(runs, name, mode, cpu):
    result = runs[(name, mode, cpu)]
    assert result.returncode == 0, _story(result)
    assert _final_line(result).startswith("FINAL "), _story(result)
    assert "Traceback" not in result.stderr, _story(result)


@pytest.mark.parametrize("name, mode, cpu", CASES, ids=_ids(CASES))
def test_the_loss_after_training_matches_the_script_written_with_torch_amp(runs, name, mode, cpu):
    result, reference = runs[(name, mode, cpu)], runs[(name, "reference", cpu)]
    want, got = _losses(reference), _losses(result)
    assert want, _story(reference)
    assert sorted(got) == sorted(want), f"losses {got}, expected {want}\n{_story(result)}"
    far = {key: (got[key], want[key]) for key in want
           if not abs(got[key] - want[key]) <= RELATIVE_TOLERANCE * abs(want[key])}
    assert not far, f"beyond {RELATIVE_TOLERANCE} relative (got, reference): {far}\n{_story(result)}"


MIGRATED_TEXT = [(kind, name) for kind in ("cpu", "accelerator", "npu-native") for name in PROJECTS]


@pytest.mark.parametrize("kind, name", MIGRATED_TEXT, ids=_ids(MIGRATED_TEXT))
def test_the_migrated_script_imports_no_apex_and_says_where_it_uses_the_stand_in(migrations, kind, name):
    source, out = _migrated(migrations, kind, name)
    assert not _apex_imports(source), _apex_imports(source)
    if _compat_imports(source):
        codes = {row["Rule"] for row in _change_rows(out, name)}
        assert COMPAT_CODE in codes, (f"{name} imports {COMPAT_MODULE} with no {COMPAT_CODE} row", codes)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_npu_target_keeps_what_ascends_apex_has_by_default(migrations, name):
    """Ascend ships its own apex, with amp and the NpuFused optimizers only: amp's imports stay as
    the script wrote them; what Ascend's apex lacks (apex.parallel, FusedAdam) is imported no more
    (rewritten natively, or from the stand-in with a TP307 row)."""
    source, out = _migrated(migrations, "npu", name)
    written = (PROJECT_DIR / f"{name}.py").read_text()
    amp_lines = [line.strip() for line in written.splitlines() if re.fullmatch(r"\s*from apex import amp", line)]
    assert amp_lines and all(re.search(rf"^\s*{line}$", source, re.MULTILINE) for line in amp_lines)
    assert not [m for m in _apex_imports(source) if not in_build(m, ASCEND_APEX)], _apex_imports(source)
    if _compat_imports(source):
        assert COMPAT_CODE in {row["Rule"] for row in _change_rows(out, name)}
