"""convert_source on each named case: NPU code read back into CUDA's dialect; rows at the lines of
the file as read; converting twice gives the text of converting once."""

from __future__ import annotations

from dataclasses import replace
from textwrap import dedent

import pytest

from torchport import targets
from torchport.apis import npu_ops
from torchport.apis.cuda_module import DEVICE_MODULE
from torchport.findings import Operation
from torchport.npu_to_cuda.changes import CODES
from torchport.npu_to_cuda.driver import convert_source
from torchport.targets import npu as npu_facts

from _npu_cases import CASES

CPU = targets.get("cpu")


@pytest.mark.parametrize(("before", "after"), CASES)
def test_npu_code_reads_as_cuda_code(before, after):
    assert convert_source(before, "case.py", CPU).source == after


@pytest.mark.parametrize("after", [p.values[1] for p in CASES], ids=[p.id for p in CASES])
def test_converting_the_output_again_changes_nothing(after):
    again = convert_source(after, "case.py", CPU)
    assert again.source == after and not again.changed


@pytest.mark.parametrize("before", [p.values[0] for p in CASES], ids=[p.id for p in CASES])
def test_every_row_has_a_listed_code_and_a_line_of_the_file(before):
    converted = convert_source(before, "case.py", CPU)
    lines = before.count("\n") + 1
    assert converted.findings and converted.changed
    assert all(f.code in CODES and 1 <= f.start_line <= lines for f in converted.findings)


def test_a_file_without_npu_code_is_returned_as_it_is():
    text = "import torch\nx = torch.ones(2).cuda()  # on the gpu\n"
    assert convert_source(text, "case.py", CPU) == convert_source(text, "case.py", CPU)
    converted = convert_source(text, "case.py", CPU)
    assert (converted.source, converted.findings, converted.changed) == (text, [], False)


def test_a_syntax_error_is_returned_as_it_is_without_rows():
    text = "import torch_npu\ndef f(:\n"
    converted = convert_source(text, "case.py", CPU)
    assert (converted.source, converted.findings, converted.changed) == (text, [], False)


def _rows(before: str, target=CPU) -> set[tuple[int, str, Operation]]:
    return {(f.start_line, f.code, f.operation) for f in convert_source(dedent(before), "case.py", target).findings}


def test_rows_are_at_the_lines_of_the_file_as_read():
    rows = _rows("""\
        import torch
        import torch_npu
        torch.npu.set_compile_mode(jit_compile=False)

        x = torch.ones(2).npu()
        torch.npu.get_soc_version()
        """)
    assert rows == {(2, "TP401", Operation.UNSUPPORTED),  # kept: line 6 still needs it
                    (3, "TP407", Operation.DELETE), (5, "TP403", Operation.MODIFY),
                    (6, "TP402", Operation.UNSUPPORTED)}


def test_a_kernel_without_a_torch_computation_is_listed_by_name():
    converted = convert_source("import torch_npu\ny = torch_npu.npu_not_a_kernel_we_know(1)\n", "case.py", CPU)
    unsupported = [f for f in converted.findings if f.operation is Operation.UNSUPPORTED]
    assert {f.api for f in unsupported} == {"torch_npu.npu_not_a_kernel_we_know", "torch_npu"}
    assert not converted.changed


def test_another_targets_ascend_settings_read_are_noted_not_changed():
    converted = convert_source('import os\nlevel = os.environ["ASCEND_GLOBAL_LOG_LEVEL"]\n', "case.py", CPU)
    assert [(f.code, f.operation) for f in converted.findings] == [("TP400", Operation.NOTE)]
    assert not converted.changed


CUDA = next((t for t in targets.all_targets().values() if t.device_module == DEVICE_MODULE), None) or replace(
    CPU, name="cuda", device_module=DEVICE_MODULE)  # (the reverse port's target, until it is there)


@pytest.mark.parametrize(("call", "becomes"), [
    ("NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)", "torch.optim.SGD("),
    ("NpuFusedAdamW(model.parameters(), 1e-3, (0.9, 0.99))", "torch.optim.AdamW("),
    ("NpuFusedRMSpropTF(model.parameters(), lr=0.1, decoupled_decay=True)", "torchport.optim.NpuFusedRMSpropTF("),
    ("NpuFusedLamb(model.parameters(), lr=0.1)", "torchport.optim.NpuFusedLamb("),
    ("NpuFusedSGD(model.parameters(), **options)", "torchport.optim.NpuFusedSGD("),
], ids=["same arguments", "same by position", "an argument that differs", "no torch twin", "**kwargs"])
def test_on_cuda_an_npu_fused_optimizer_becomes_torchs_where_every_argument_means_the_same(call, becomes):
    before = f"from torch_npu.optim import *\nimport torch_npu.optim\noptimizer = torch_npu.optim.{call}\n"
    assert becomes in convert_source(before, "case.py", CUDA).source


def _with_op(monkeypatch, **fields):
    op = replace(npu_ops.NPU_OPS["npu_linear"], **fields)
    monkeypatch.setitem(npu_ops.NPU_OPS, "npu_linear", op)


def test_a_helper_kernel_is_written_once_after_the_imports_and_called(monkeypatch):
    _with_op(monkeypatch, inline=None)
    before = 'import os\nfrom torch_npu import npu_linear\na = npu_linear(x, w)\nb = npu_linear(x, w, b)\n'
    after = convert_source(before, "case.py", CPU).source
    assert after.count("def npu_linear(") == 1 and after.startswith("import os\nimport torch\n\n\ndef npu_linear(")
    assert "a = npu_linear(x, w)\nb = npu_linear(x, w, b)\n" in after and "torch_npu" not in after
    compile(after, "case.py", "exec")  # (what it computes is the ops helper's reference function, tested there)


def test_a_kernel_whose_first_result_is_taken_has_its_own_form(monkeypatch):
    _with_op(monkeypatch, inline_first="torch.nn.functional.linear({input}, {weight}, {bias}).neg()")
    before = "import torch_npu\ny = torch_npu.npu_linear(x, w)[0]\nz = torch_npu.npu_linear(x, w)[1]\n"
    after = convert_source(before, "case.py", CPU).source
    assert after == ("import torch\ny = torch.nn.functional.linear(x, w, None).neg()\n"
                     "z = torch.nn.functional.linear(x, w, None)[1]\n")


def test_what_is_kept_of_torch_npu_beside_its_fallback_is_listed_with_the_fallback_named():
    """(#26: every torch_npu import left is in unsupported_api.csv; the row says what runs without it)"""
    before = dict((p.id, p.values[0]) for p in CASES)[
        "a guarded import with the file's own fallback stays; a method of the script's own; apex.optimizers.NpuFused*"]
    rows = [(f.start_line, f.operation, "fallback (line 6)" in f.message)
            for f in convert_source(before, "case.py", CPU).findings if f.operation in (Operation.NOTE, Operation.UNSUPPORTED)]
    assert rows == [(4, Operation.UNSUPPORTED, True), (13, Operation.UNSUPPORTED, True)]


def test_a_use_in_a_function_finds_the_fallback_bound_at_module_level():
    before = ("try:\n    import torch_npu\nexcept ImportError:\n    torch_npu = None\n\n"
              "def f(x):\n    return torch_npu.npu_not_a_kernel_we_know(x)\n")
    rows = {(f.start_line, f.operation) for f in convert_source(before, "case.py", CPU).findings}
    messages = " ".join(f.message for f in convert_source(before, "case.py", CPU).findings)
    assert rows == {(2, Operation.UNSUPPORTED), (7, Operation.UNSUPPORTED)} and "fallback (line 4)" in messages


@pytest.mark.parametrize(("call", "inline"), [
    ("torch_npu.npu_rms_norm(x, self.weight)[0]", "torch.nn.functional.rms_norm(x, self.weight.shape, self.weight, 1e-06)"),
    ("torch_npu.npu_rms_norm(x, make_weight())[0]", None),
    ("torch_npu.npu_confusion_transpose(x, (1, 0), (4,), first)", None),
    ("torch_npu.npu_fast_gelu(x.float())", None),
], ids=["a repeated argument that is a name", "a repeated argument that is a call",
        "a literal-only template given a name", "fast_gelu of a call"])
def test_a_template_is_used_only_where_it_computes_what_the_kernel_does(call, inline):
    """(a repeated argument is evaluated twice; a literal-only template needs its literal)"""
    after = convert_source(f"import torch_npu\ny = {call}\n", "case.py", CPU).source
    name = call.split("(")[0].split(".")[1]
    assert [line for line in after.splitlines() if line.startswith("import ")] == ["import torch"]
    if inline is not None:
        assert f"y = {inline}\n" in after and f"def {name}(" not in after
    else:
        assert f"def {name}(" in after and f"y = {name}(" in after


@pytest.mark.parametrize("name", sorted(npu_facts.bare_kernels() - set(npu_ops.NPU_OPS)))
def test_a_bare_kernel_of_torch_npu_on_torch_without_a_computation_is_listed_by_name(name):
    converted = convert_source(f"import torch\ny = torch.{name}(x)\n", "case.py", CPU)
    assert [(f.start_line, f.operation, f.api) for f in converted.findings] == [
        (2, Operation.UNSUPPORTED, f"torch.{name}")] and not converted.changed


def test_the_bare_kernels_are_torch_npus_own_operators_that_torch_lacks():
    bare = npu_facts.bare_kernels()
    assert "fast_gelu" in bare and "dropout_with_byte_mask" in bare
    assert not any(name.startswith(("npu_", "_")) for name in bare) and "gelu" not in bare


def test_a_use_npu_key_of_a_dict_not_passed_to_the_profiler_here_is_listed_not_changed():
    converted = convert_source("import torch\noptions = {'use_npu': True}\nrun(**options)\n", "case.py", CPU)
    assert [(f.start_line, f.operation, f.api) for f in converted.findings] == [(2, Operation.UNSUPPORTED, "use_npu")]
    assert not converted.changed


@pytest.mark.parametrize("target", ["cpu", "npu", "xpu"])
def test_an_npu_type_name_ends_on_each_target_as_cudas_own_spelling_does(target):
    """(WaveGlow: `z.type() == 'torch.npu.HalfTensor'`: never true on the CPU if left as CUDA's)"""
    from torchport.migrate import migrate_source

    def migrated(text: str) -> str:
        return migrate_source(text.encode(), targets.get(target), "glow.py").source.decode()

    npu = "import torch\nhalf = z.type() == 'torch.npu.HalfTensor'\n"
    cuda = "import torch\nhalf = z.type() == 'torch.cuda.HalfTensor'\n"
    assert migrated(convert_source(npu, "glow.py", targets.get(target)).source) == migrated(cuda)
