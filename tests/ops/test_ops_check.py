"""`ops check`: a verdict per op on a target, from the kernel lists of the real wheels."""

from __future__ import annotations

import csv

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.ops import kernels, opset
from torchport.ops.check import Verdict, check
from torchport.ops.opset import OpSet

DATA = kernels.default()


def _ops(*records) -> OpSet:
    ops = OpSet()
    for name, options in records:
        ops.add(name, **{"caller": "", **options})
    return ops


def _verdicts(ops: OpSet, target: str) -> dict[str, tuple[Verdict, str]]:
    return {row.op.name: (row.verdict, row.why) for row in check(ops, target, DATA)}


@pytest.mark.parametrize("target", ["npu", "mps", "cpu"])
def test_addmm_passes_on_every_device(target):
    ops = _ops(("aten::addmm", {"overload": "default", "dtypes": ["float32"]}))
    assert _verdicts(ops, target)["aten::addmm"][0] is Verdict.OK


def test_ctc_loss_has_no_mps_kernel_and_eigh_none_on_the_npu():
    ops = _ops(("aten::_ctc_loss", {"overload": "default"}), ("aten::_linalg_eigh", {"overload": "default"}))
    mps, npu = _verdicts(ops, "mps"), _verdicts(ops, "npu")
    assert mps["aten::_ctc_loss"][0] is Verdict.MISSING
    assert "no MPS kernel in torch 2.13.0" in mps["aten::_ctc_loss"][1]
    assert "PYTORCH_ENABLE_MPS_FALLBACK=1" in mps["aten::_ctc_loss"][1]
    assert npu["aten::_ctc_loss"][0] is Verdict.OK  # torch_npu has one
    assert npu["aten::_linalg_eigh"][0] is Verdict.MISSING
    assert "not in torch_npu 2.14.0's kernels" in npu["aten::_linalg_eigh"][1]


def test_float64_is_flagged_on_mps_only():
    ops = _ops(("aten::addmm", {"overload": "default", "dtypes": ["float64"]}))
    verdict, why = _verdicts(ops, "mps")["aten::addmm"]
    assert verdict is Verdict.DTYPE and why.startswith("float64: the MPS framework has no float64")
    assert _verdicts(ops, "npu")["aten::addmm"][0] is Verdict.OK


def test_an_op_known_only_by_name_is_judged_by_the_overloads_its_argument_count_fits():
    # addmm.dtype (6 arguments) has no MPS kernel; a call with 5 inputs is plain addmm
    five = _ops(("aten::addmm", {"shapes": [[5], [2, 36], [36, 5], [], []]}))
    assert _verdicts(five, "mps")["aten::addmm"][0] is Verdict.OK
    both = _ops(("aten::addmm", {"overload": "default"}), ("aten::addmm", {"overload": "dtype"}))
    verdict, why = _verdicts(both, "mps")["aten::addmm"]
    assert verdict is Verdict.PARTIAL and why.startswith("addmm.dtype: no MPS kernel")


def test_an_op_called_only_inside_an_op_the_target_has_its_own_kernel_for_is_internal():
    # recorded on CUDA: cudnn_convolution inside _convolution's composite kernel
    ops = _ops(("aten::cudnn_convolution", {"caller": "aten::_convolution", "count": 2}))
    verdict, why = _verdicts(ops, "npu")["aten::cudnn_convolution"]  # torch_npu has its own _convolution
    assert verdict is Verdict.INTERNAL
    assert why.startswith("called only inside aten::_convolution, which NPU runs with its own kernel")
    assert _verdicts(ops, "mps")["aten::cudnn_convolution"][0] is Verdict.MISSING  # MPS runs the composite one
    ops.add("aten::cudnn_convolution", caller="")  # once at the top level: the program calls it itself
    assert _verdicts(ops, "npu")["aten::cudnn_convolution"][0] is Verdict.MISSING


def test_an_op_only_cuda_has_is_missing_with_a_hint_that_it_is_a_cuda_path():
    verdict, why = _verdicts(_ops(("aten::cudnn_convolution", {})), "npu")["aten::cudnn_convolution"]
    assert verdict is Verdict.MISSING and why.endswith("(only CUDA has it: likely the path an op above it takes there, which may differ here)")
    assert "only" not in _verdicts(_ops(("aten::_linalg_eigh", {})), "npu")["aten::_linalg_eigh"][1]


def test_what_the_data_cannot_answer_is_unknown():
    ops = _ops(("torchvision::nms", {}), ("aten::relu", {"overload": "default"}), ("aten::no_such_op", {}))
    xpu = _verdicts(ops, "xpu")
    assert xpu["torchvision::nms"][0] is Verdict.UNKNOWN
    assert xpu["aten::no_such_op"][0] is Verdict.UNKNOWN
    assert xpu["aten::relu"] == (Verdict.UNKNOWN, "XPU kernels are registered by intel/torch-xpu-ops, not in these data")


def test_torch_npu_operators_exist_only_on_the_npu():
    ops = _ops(("npu::npu_format_cast", {}))
    assert _verdicts(ops, "npu")["npu::npu_format_cast"][0] is Verdict.OK
    assert _verdicts(ops, "mps")["npu::npu_format_cast"][0] is Verdict.MISSING


def test_accelerator_code_needs_a_kernel_on_every_backend_and_says_which_lack_it(monkeypatch):
    built_in = {name: target for name, target in targets.all_targets().items() if name in BUILT_IN}
    monkeypatch.setattr(targets, "all_targets", lambda: built_in)  # (the backends torchport ships)
    ops = _ops(("aten::_ctc_loss", {"overload": "default"}), ("aten::addmm", {"overload": "default"}))
    verdicts = _verdicts(ops, "accelerator")
    verdict, why = verdicts["aten::_ctc_loss"]
    assert verdict is Verdict.MISSING and why.startswith("XPU: ") and "MPS: no MPS kernel" in why
    assert "NPU" not in why  # torch_npu has it
    assert verdicts["aten::addmm"][0] is Verdict.OK


def test_on_accelerator_an_op_gets_the_worst_verdict_of_every_target_with_a_device_type():
    """(whatever targets are discovered: an added one's kernels count as the built-in ones' do)"""
    ops = _ops(("aten::_ctc_loss", {"overload": "default"}), ("aten::addmm", {"overload": "default"}),
               ("npu::npu_format_cast", {}))
    each = [_verdicts(ops, name) for name in targets.names() if targets.get(name).device_type]
    for op, (verdict, _) in _verdicts(ops, "accelerator").items():
        assert verdict is min((verdicts[op][0] for verdicts in each), key=lambda v: v.severity), op


def test_the_command_prints_a_table_and_writes_every_verdict_to_csv(cli, tmp_path):
    ops = _ops(("aten::_ctc_loss", {"overload": "default"}), ("aten::addmm", {"overload": "default"}))
    opset.write(tmp_path / "ops.json", ops, {"kind": "test"})
    status, out, err = cli("ops", "check", tmp_path / "ops.json", "--target", "mps", "--csv", tmp_path / "mps.csv")
    assert status == 0 and err == ""
    header, row, summary = out.splitlines()
    assert header.split() == ["op", "count", "verdict", "why"]
    assert row.split()[:3] == ["aten::_ctc_loss", "1", "missing"]
    assert summary == "torchport ops check [mps]: 2 ops: 1 missing, 1 ok"
    with open(tmp_path / "mps.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["Op"], r["Verdict"], r["Target"]) for r in rows] == [
        ("aten::_ctc_loss", "missing", "mps"), ("aten::addmm", "ok", "mps")
    ]
    status, _, _ = cli("ops", "check", tmp_path / "ops.json", "--target", "mps", "--strict")
    assert status == 1
    status, out, _ = cli("ops", "check", tmp_path / "ops.json", "--target", "npu", "--strict")
    assert status == 0 and out.splitlines() == ["torchport ops check [npu]: 2 ops: 2 ok"]


def test_check_and_extract_never_import_torch(tmp_path):
    import subprocess
    import sys

    opset.write(tmp_path / "ops.json", _ops(("aten::addmm", {})), {"kind": "test"})
    (tmp_path / "trace.json").write_text('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}]}')
    code = (
        "import sys; from torchport.cli import main; "
        f"assert main(['ops', 'check', {str(tmp_path / 'ops.json')!r}, '--target', 'mps']) == 0; "
        f"assert main(['ops', 'extract', {str(tmp_path / 'trace.json')!r}, '-o', {str(tmp_path / 'out.json')!r}]) == 0; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
