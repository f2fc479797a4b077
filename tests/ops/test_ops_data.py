"""The committed kernel lists: made from the packages they name, and read as torch itself reads them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from torchport import targets
from torchport.ops import kernels
from torchport.targets.kernels import Kernels
from torchport.targets.surface import TORCH_KERNELS, load

ROOT = Path(__file__).resolve().parents[2]
NPU_WHEEL = Path("/tmp/npuwheel/torch_npu-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl")
DATA = kernels.default()


def _generator():
    pytest.importorskip("yaml")  # the generator reads yaml; the package never does
    spec = importlib.util.spec_from_file_location("gen_kernels", ROOT / "tools" / "gen_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_torch_data_is_what_the_generator_makes_from_the_installed_torch():
    torch = pytest.importorskip("torch")
    gen = _generator()
    made = gen.torch_kernels(gen.default_torch_yaml())
    assert made["version"] == torch.__version__.split("+")[0] == DATA.torch_version
    assert json.loads(gen.dumps(made)) == load(TORCH_KERNELS)


@pytest.mark.skipif(not NPU_WHEEL.exists(), reason="the torch_npu wheel is not here (pip download torch-npu==2.14.0)")
def test_the_npu_data_is_what_the_generator_makes_from_the_wheel():
    made = _generator().npu_kernels(NPU_WHEEL)
    assert made["version"] == DATA.own["NPU"].version == "2.14.0"
    assert made == load(targets.get("npu").kernels.own_data)


def test_cpu_verdicts_match_the_kernels_this_torch_registered():
    """Every overload torch declares: the data says the CPU runs it exactly when the dispatcher of
    the installed torch (a CPU build) has a kernel for it. Variants made by `autogen:` are left
    out: their out= kernel is registered, but calls an op the CPU may lack."""
    torch = pytest.importorskip("torch")
    declared = [name for name in DATA.arity]
    wrong = [
        name for name in declared
        if bool(DATA.support(name, "CPU").supported)
        != torch._C._dispatch_has_computed_kernel_for_dispatch_key(f"aten::{name}", "CPU")
    ]
    assert len(declared) > 2500 and wrong == []


def test_each_backend_has_most_ops_and_lacks_some():
    names = list(DATA.arity)
    for backend, least in (("CPU", 2200), ("CUDA", 2300), ("MPS", 2000), ("NPU", 1900)):
        answers = [DATA.support(name, backend).supported for name in names]
        assert answers.count(True) > least and answers.count(False) > 50, backend
    assert DATA.support("_linalg_eigh", "MPS").supported is False
    assert DATA.support("add_.Tensor", "NPU").how.startswith("torch_npu 2.14.0")


def test_xpu_is_unknown_where_torch_does_not_list_it_never_guessed():
    assert DATA.support("addmm", "XPU").supported is True  # torch lists XPU for addmm
    assert DATA.support("relu", "XPU").supported is None  # its XPU kernel lives in torch-xpu-ops
    assert DATA.support("linear", "XPU").supported is True  # composite


def test_a_target_of_another_package_brings_kernel_data_of_its_own(tmp_path, monkeypatch):
    """A vendor's target names a file of its own package's data/ folder (made as gen_kernels makes
    torch_npu's): its kernels and operators are judged as torch_npu's are."""
    (tmp_path / "foo_runtime" / "data").mkdir(parents=True)
    (tmp_path / "foo_runtime" / "__init__.py").write_text("")
    mine = {"package": "foo_runtime", "version": "0.1", "kernels": ["addmm"], "custom": ["foo_fused.default"]}
    (tmp_path / "foo_runtime" / "data" / "kernels-foo_runtime-0.1.json").write_text(json.dumps(mine))
    monkeypatch.syspath_prepend(str(tmp_path))
    foo = Kernels("FOO", own_data="kernels-foo_runtime-0.1.json", data_package="foo_runtime", namespace="foo")
    data = kernels.of([foo, targets.get("mps").kernels])
    assert data.support("addmm", "FOO") == kernels.Support(True, "foo_runtime 0.1 kernel")
    assert data.support("_linalg_eigh", "FOO") == kernels.Support(False, "not in foo_runtime 0.1's kernels")
    assert data.support("linear", "FOO").how == "composite"
    assert data.custom_support("foo", "foo_fused", "FOO").supported is True
    assert data.custom_support("foo", "foo_fused", "MPS") == kernels.Support(False, "a foo_runtime operator: exists only on the FOO")


def test_structured_ops_inherit_their_delegate_and_ufunc_loops_give_cpu_and_cuda():
    assert DATA.inherits["add_.Tensor"] == "add.out"
    for backend in ("CPU", "CUDA", "MPS"):
        assert DATA.support("add_.Tensor", backend).supported, backend


def test_the_schema_reader_counts_arguments_and_finds_out_variants():
    gen = _generator()
    addmm_out = "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    assert len(gen.arguments(addmm_out)) == 6 and gen.is_out_variant(addmm_out)
    pool = "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0) -> Tensor"
    assert len(gen.arguments(pool)) == 4 and not gen.is_out_variant(pool)
    assert gen.arguments("foo() -> Tensor") == []


def test_an_operator_lacks_a_kernel_only_where_no_overload_but_out_has_one():
    data = kernels.default()
    assert data.operator_support("mode", "MPS").supported is False  # (mode.values, its out= form, is composite)
    assert data.operator_support("var_mean", "NPU").supported is True  # torch_npu 2.14 lists var_mean.correction
    assert data.operator_support("adaptive_max_pool2d", "NPU").supported is True
    assert data.operator_support("adaptive_max_pool3d", "XPU").supported is None  # torch-xpu-ops' own
    assert data.operator_support("no_such_operator", "CPU").supported is None
