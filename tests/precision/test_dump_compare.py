"""`torchport dump` and `torchport compare` as a user runs them, on a classifier of our own whose
second layer can be made to lose precision or to overflow, and on the bundled examples (the
original under run-time migration against its `migrate --target cpu` output)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _torchport_cli import TORCHPORT, Dumps, run

ROOT = Path(__file__).resolve().parents[2]
CLASSIFIER = Path(__file__).parent / "projects" / "classifier.py"
EXAMPLES = ["autoencoder_quickstart", "amp_classifier", "cnn_benchmark", "transformer_checkpoint"]




def _dump(folder: Path, name: str, *script_args, **env) -> Path:
    result = run([*TORCHPORT, "dump", "-o", name, "--steps", "3", "--target", "cpu", CLASSIFIER, *script_args],
                  folder, **env)
    assert result.returncode == 0, result.stderr
    return folder / name


# name -> (script arguments, environment) of each dump the tests compare
RECIPES = {
    "clean": ((), {}),
    "again": ((), {}),
    "float16": ((), {"PRECISION_FAULT": "float16"}),
    "inf": ((), {"PRECISION_FAULT": "inf"}),
    # (run keeps CUDA's autocast on the CPU only where it has native bfloat16: both ways)
    "bf16": (("--amp",), {"SIMULATE_NATIVE_BF16": "1"}),
    "bf16_dropped": (("--amp",), {"SIMULATE_NATIVE_BF16": "0"}),
}


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dumps")
    return Dumps(lambda name: _dump(folder, name, *RECIPES[name][0], **RECIPES[name][1]))


def _compare(a: Path, b: Path, *options):
    return run([*TORCHPORT, "compare", a, b, *options], a.parent)


def _summary(result) -> str:
    return result.stdout.strip().splitlines()[-1]


def test_two_clean_runs_compare_with_exit_0(dumps):
    """(50 calls: 42 of module calls, outputs and gradients over the 3 steps, and 8 of the script's
    own torch calls: its data's torch.randn and sum, and each step Net.forward's F.relu, output and
    gradient)"""
    result = _compare(dumps["clean"], dumps["again"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert _summary(result) == "torchport compare: no divergence (50 calls compared at float32)"


def test_the_layer_that_loses_precision_is_named_first_not_the_layer_before_it(dumps, tmp_path):
    result = _compare(dumps["clean"], dumps["float16"], "-o", tmp_path / "report")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "; first: step 1 forward Net.fc2 (" in _summary(result), _summary(result)
    assert f"{CLASSIFIER}:43): relative error " in _summary(result)  # the line that called the layer
    rows = (tmp_path / "report" / "compare.csv").read_text().splitlines()
    verdicts = {tuple(row.split(",")[:4]): row.split(",")[17] for row in rows[1:]}
    assert verdicts[("1", "forward", "Net.fc1", "")] == verdicts[("1", "forward", "Net.fc2.linear", "")] == "same"
    assert verdicts[("1", "forward", "Net.fc2", "")] == "diverges"
    assert rows[0].startswith("Step,Phase,Module,API,Call,Output,Source,Dtype A,Dtype B,Elements,Cosine,")
    assert "Net.fc2" in (tmp_path / "report" / "compare.html").read_text()


@pytest.mark.fidelity  # (one more dump each: make test keeps the clean pair and the float16 fault)
def test_an_overflow_is_reported_at_its_layer_and_step(dumps):
    result = _compare(dumps["clean"], dumps["inf"])
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    nonfinite = next(line for line in lines if line.lstrip().startswith("NaN/Inf"))
    assert "first at step 2 forward Net.fc2 " in nonfinite and "Inf in B only" in nonfinite, nonfinite
    assert any(line.lstrip().startswith("losses    part at step 2:") for line in lines), result.stdout


@pytest.mark.fidelity  # (one more dump each: make test keeps the clean pair and the float16 fault)
def test_float32_against_bfloat16_autocast_is_a_finding_within_bfloat16_not_a_divergence(dumps):
    result = _compare(dumps["clean"], dumps["bf16"])
    assert result.returncode == 0, result.stdout
    assert _summary(result) == "torchport compare: no divergence (50 calls compared at bfloat16)"
    assert "calls computed at lower precision, as expected" in result.stdout
    assert "setting   autocast_dtypes: [] against ['bfloat16']" in result.stdout


@pytest.mark.fidelity  # (one more dump each: make test keeps the clean pair and the float16 fault)
def test_where_run_drops_autocast_on_this_cpu_the_amp_run_computes_what_float32_does(dumps):
    result = _compare(dumps["clean"], dumps["bf16_dropped"], "-o", dumps["clean"].parent / "dropped")
    assert result.returncode == 0, result.stdout
    assert _summary(result) == "torchport compare: no divergence (50 calls compared at float32)"
    verdicts = {row.split(",")[17] for row in (dumps["clean"].parent / "dropped" / "compare.csv").read_text().splitlines()[1:]}
    assert verdicts == {"same"}


def test_the_same_fault_judged_at_float32_is_a_divergence_so_the_tolerance_tells(dumps):
    """(float16 rounding is well within bfloat16's tolerance: what makes it a divergence in the
    clean run's comparison is that both runs computed in float32)"""
    from torchport.precision.measures import tolerance

    result = _compare(dumps["clean"], dumps["float16"])
    error = float(_summary(result).rsplit("relative error ", 1)[1].split(" ")[0])
    assert tolerance("float32") < error < tolerance("bfloat16")


def test_bad_input_is_one_line_and_exit_2(dumps, tmp_path):
    (tmp_path / "empty").mkdir()
    result = _compare(dumps["clean"], tmp_path / "empty")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "not a dump (dump.json is missing)" in result.stderr
    result = run([*TORCHPORT, "dump", "-o", "d", "missing.py"], tmp_path)
    assert (result.returncode, result.stderr) == (2, "torchport dump: error: no such script: missing.py\n")


def _run_against_migrated(example: str, tmp_path: Path):
    script = ROOT / "examples" / f"{example}.py"
    migrated = tmp_path / "migrated"
    result = run([*TORCHPORT, "migrate", "-q", "--target", "cpu", "-o", migrated, script], tmp_path)
    assert result.returncode == 0, result.stderr
    for args in (["-o", "original", "--target", "cpu", script], ["-o", "migrated_dump", migrated / script.name]):
        result = run([*TORCHPORT, "dump", *args], tmp_path)
        assert result.returncode == 0, result.stderr
    for name in ("original", "migrated_dump"):
        size = sum(f.stat().st_size for f in (tmp_path / name).iterdir())
        assert size < 10 * 2**20, (name, size)
    return _compare(tmp_path / "original", tmp_path / "migrated_dump")


@pytest.mark.fidelity  # (whole examples, twice each: make test keeps to the dumps above)
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_under_run_against_its_migrate_output_does_not_diverge(example, tmp_path):
    result = _run_against_migrated(example, tmp_path)
    assert result.returncode == 0 and "torchport compare: no divergence" in result.stdout, result.stdout
