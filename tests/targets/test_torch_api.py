"""torch's own API, as the committed data says (tools/gen_api.py, from torch 2.13): what exists,
what the data cannot judge, and which aten operator an API is (read against the kernel data)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from torchport.ops import kernels
from torchport.targets.surface import TORCH_API, TORCH_KERNELS, load
from torchport.targets.torch_api import TorchApi, Unknown, torch_api

ROOT = Path(__file__).resolve().parents[2]


def test_the_data_says_where_it_comes_from_and_matches_the_kernel_datas_torch():
    data = load(TORCH_API)
    assert data["generated_by"] == "tools/gen_api.py" and data["version"] == load(TORCH_KERNELS)["version"] == "2.13.0"
    assert len((ROOT / "src/torchport/targets/data" / TORCH_API).read_bytes()) < 400_000


def test_every_linked_operator_is_one_the_kernel_data_knows():
    data = kernels.default()
    assert [op for op in torch_api().operators.values() if not data.knows(op)] == []


@pytest.mark.parametrize(("api", "operator"), [
    ("torch.var_mean", "var_mean"),
    ("torch.linalg.norm", "linalg_norm"),  # python_module: linalg
    ("torch.fft.rfft", "fft_rfft"),
    ("torch.Tensor.add_", "add_"),  # a method variant
    ("torch.nn.functional.gelu", "gelu"),  # torch._C._nn's own
    ("torch.nn.functional.adaptive_max_pool2d", "adaptive_max_pool2d"),  # Python, through boolean_dispatch
    ("torch.nn.functional.relu", "relu"),  # Python, calls torch.relu
    ("torch.nn.Conv2d", None),  # a module class
    ("torch.optim.Adam", None),
    ("torch.nn.functional.interpolate", None),  # a wrapper of several operators
], ids=lambda v: str(v))
def test_an_api_is_linked_to_the_operator_torch_binds_it_to_and_only_then(api, operator):
    assert torch_api().operator(api) == operator


TOY = {
    "version": "9.9",
    "modules": {"torch": {"module": ["nn", "fx", "lazy"], "function": ["tensor", "solve"], "class": ["Tensor", "Size"]},
                "torch.nn": {"class": ["Linear"]}, "torch.lazy": {"function": ["x"]}},
    "open": ["torch.lazy"],
    "members": {"torch.Tensor": ["add_"]},
    "lowers_to": {},
    "removed": {"torch.solve": "torch.linalg.solve"},
    "device_types": ["hpu"],
}


@pytest.mark.parametrize(("name", "unknown"), [
    ("torch.tensr", Unknown("torch.tensr", "torch.tensor")),
    ("torch.nn.Linaer.weight", Unknown("torch.nn.Linaer", "torch.nn.Linear")),
    ("torch.Tensor.ad_", Unknown("torch.Tensor.ad_", "torch.Tensor.add_")),
    ("torch.solve", Unknown("torch.solve", "torch.linalg.solve", removed=True)),
    ("torch.tensor.foo", None),  # an attribute of a function
    ("torch.Size.foo", None),  # a class whose members are not recorded
    ("torch.fx.anything", None),  # a module not walked
    ("torch.lazy.anything", None),  # a module that answers names at run time
    ("torch._private", None),
    ("torch.npu.anything", None),  # added by another package
    ("torch.hpu.is_available", None),  # a device type's module, which its package adds
    ("numpy.foo", None),
])
def test_a_name_is_unknown_only_where_the_data_can_say_so(name, unknown):
    assert TorchApi(TOY, added=frozenset({"torch.npu"})).unknown(name) == unknown


@pytest.mark.fidelity
def test_the_committed_data_is_what_the_generator_makes_of_the_installed_torch(tmp_path):
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "tools" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_api"] = module
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path)]) == 0
    made = json.loads((tmp_path / TORCH_API).read_text(encoding="utf-8"))
    assert made == load(TORCH_API)
