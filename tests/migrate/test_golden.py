"""Golden input -> output for every rule, on every target.

Each file in golden/ exercises one rule family; golden/expected/<name>.<target>.py is the reviewed
output, one per built-in target. Migrating that output again must change nothing (idempotence). On
a target that runs CUDA code as written (cuda) the expected output is the input itself: no copy of
it is kept. A target torchport does not ship has no reviewed output: each golden input gets the
checks its own data allows, those of the fixture cases for a target no case names
(cases/_fixture_cases.py, Unnamed).
"""

import sys
from pathlib import Path

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.migrate import migrate_source

sys.path.insert(0, str(Path(__file__).parent / "cases"))
import _fixture_cases as fixture  # noqa: E402  (the module the fixture cases import by this name)

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.py"))
KEPT = [name for name in BUILT_IN if not targets.get(name).runs_cuda_code]  # (those with reviewed outputs)


def _expected(case: str, target: str) -> Path:
    if targets.get(target).runs_cuda_code:
        return GOLDEN / f"{case}.py"
    return GOLDEN / "expected" / f"{case}.{target}.py"


@pytest.mark.parametrize("target", targets.names())
@pytest.mark.parametrize("case", CASES)
def test_golden_output(case, target):
    source = (GOLDEN / f"{case}.py").read_bytes()
    if target not in BUILT_IN:
        return fixture.assert_as_its_data_says(source.decode(), target)
    expected = _expected(case, target).read_bytes()
    result = migrate_source(source, targets.get(target), f"{case}.py")
    assert result.error is None
    assert result.source.decode() == expected.decode()


@pytest.mark.parametrize("target", BUILT_IN)  # (the others: in test_golden_output's derived checks)
@pytest.mark.parametrize("case", CASES)
def test_migrating_the_output_again_changes_nothing(case, target):
    migrated = _expected(case, target).read_bytes()
    again = migrate_source(migrated, targets.get(target), f"{case}.py")
    assert again.source == migrated
    assert not again.changed


def test_every_golden_case_has_an_expectation_per_built_in_target():
    expected = {p.name for p in (GOLDEN / "expected").glob("*.py")}
    assert expected == {f"{case}.{target}.py" for case in CASES for target in KEPT}


@pytest.mark.parametrize(
    ("case", "target", "operation", "api"),
    [
        ("cuda_api", "cpu", "UNSUPPORTED", "torch.cuda.make_graphed_callables"),
        ("cuda_api", "accelerator", "UNSUPPORTED", "torch.cuda.make_graphed_callables"),
        ("aliases", "npu", "NOTE", "torch.backends.cudnn.benchmark"),
        ("aliases", "cpu", "NOTE", "torch.backends.cuda.matmul.allow_tf32"),
        ("distributed", "cpu", "NOTE", ""),
    ],
)
def test_what_is_left_alone_is_reported(case, target, operation, api):
    result = migrate_source((GOLDEN / f"{case}.py").read_bytes(), targets.get(target), f"{case}.py")
    reported = [(f.operation.value, f.api) for f in result.findings if not f.operation.is_change]
    assert (operation, api) in reported


def test_every_change_is_reported_with_its_line_and_rule():
    result = migrate_source((GOLDEN / "distributed.py").read_bytes(), targets.get("npu"), "distributed.py")
    rows = {(f.start_line, f.code, f.operation.value) for f in result.findings}
    assert (7, "TP008", "MODIFY") in rows  # CUDA_VISIBLE_DEVICES
    assert (8, "TP006", "MODIFY") in rows  # "nccl"
    assert (9, "TP006", "MODIFY") in rows  # dist.Backend.NCCL
    assert (11, "TP004", "MODIFY") in rows  # torch.cuda.set_device
    assert (5, "TP000", "INSERT") in rows  # import torch_npu, on its own line in the output (after torch.distributed)


def test_a_file_that_only_sets_cudnn_flags_is_still_read():
    result = migrate_source(b"import torch\ntorch.backends.cudnn.benchmark = True\n", targets.get("cpu"), "flags.py")
    assert [(f.operation.value, f.api) for f in result.findings] == [("NOTE", "torch.backends.cudnn.benchmark")]


def test_torch_used_without_an_import_migrates_in_one_pass():
    source = b"from torch.cuda.amp import autocast\nok = torch.cuda.is_available()\nwith autocast():\n    pass\n"
    once = migrate_source(source, targets.get("npu"), "t.py").source
    assert b"torch.npu.is_available()" in once and b"import torch\n" in once
    assert migrate_source(once, targets.get("npu"), "t.py").source == once


def test_the_compile_check_prints_none_of_the_scripts_own_warnings():
    import warnings

    source = b'import torch\n\n\ndef odd():\n    return "not callable" (torch.ones(2).cuda())\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = migrate_source(source, targets.get("cpu"), "odd.py")
    assert result.changed and not [w for w in caught if issubclass(w.category, SyntaxWarning)]
