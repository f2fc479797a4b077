"""TP027: a torch API that is one aten operator which CUDA runs and the target has no kernel for,
in the kernel data `ops check` reads (torch 2.13's native_functions.yaml, torch_npu 2.14's own
list): a row at its line, on that target only. What another tool flags without cause (Adam's step,
var_mean, adaptive_max_pool2d, all of which torch_npu 2.14 has kernels for) says nothing."""

import pytest

from _fixture_cases import TORCH, assert_rows, migrated, per_target

CODE = "TP027"
UNSUPPORTED = "UNSUPPORTED"

ROWS = [
    pytest.param(
        TORCH + (
            "import torch.nn.functional as F\n"
            "def forward(self, x):\n"
            "    x = F.adaptive_max_pool3d(x, output_size=(1, 1, 1))\n"
            "    return self.linear(x.view(x.size(0), -1))\n"
        ),
        {"mps": [(CODE, 4, UNSUPPORTED)], "default": []},
        id="F.adaptive_max_pool3d: no MPS kernel (xpu: its kernels are not in the data, no row)",
    ),
    pytest.param(
        "from torch import nn\n"
        "x = nn.functional.adaptive_max_pool3d(x, output_size=(1, 1, 1))\n",
        {"mps": [(CODE, 2, UNSUPPORTED)], "default": []},
        id="the same through `from torch import nn`",
    ),
    pytest.param(
        TORCH + "from torch import mode\nvalues, indices = torch.mode(x, dim=1)\nv = mode(y)\n",
        {"npu": [(CODE, 3, UNSUPPORTED), (CODE, 4, UNSUPPORTED)], "mps": [(CODE, 3, UNSUPPORTED), (CODE, 4, UNSUPPORTED)],
         "default": []},
        id="torch.mode: neither torch_npu nor MPS has a kernel; each call, not the import",
    ),
    pytest.param(
        TORCH + "w, v = torch.linalg.eig(a)\n",
        {"npu": [(CODE, 2, UNSUPPORTED)], "mps": [(CODE, 2, UNSUPPORTED)], "default": []},
        id="torch.linalg.eig (python_module: linalg)",
    ),
    pytest.param(
        TORCH + (
            "import torch.nn.functional as F\n"
            "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
            "var, mean = torch.var_mean(x, dim=0)\n"
            "y = F.adaptive_max_pool2d(x, 1)\n"
            "z = torch.nn.functional.adaptive_max_pool2d(x, (1, 1), return_indices=True)\n"
            "loss.backward()\n"
            "optimizer.step()\n"
            "torch.optim.Adam.step(optimizer)\n"
        ),
        {"default": []},
        id="the peer's false positives: Adam's step, var_mean, adaptive_max_pool2d have kernels on npu (and mps)",
    ),
    pytest.param(
        TORCH + (
            "import torch.nn as nn\n"
            "pool = nn.AdaptiveMaxPool3d(1)\n"
            "s = torch.q_scale(qx)\n"
            "y = torch.norm(x)\n"
        ),
        {"default": []},
        id="no link to one operator (a module class, a Python wrapper of several), or no CUDA kernel either (quantized)",
    ),
]


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_an_api_without_a_kernel_on_the_target_is_a_row_there_only(source, target, rows):
    assert_rows(source, target, rows, CODE)


def _message(source: str, target: str) -> str:
    (row,) = [f for f in migrated(source, target).findings if f.code == CODE]
    return row.message


def test_the_row_names_the_operator_and_what_the_target_does_without_a_kernel():
    source = TORCH + "values, indices = torch.mode(x)\n"
    assert _message(source, "mps") == (
        "torch.mode runs aten::mode: no MPS kernel in torch 2.13.0; it fails, or runs on the CPU with "
        "PYTORCH_ENABLE_MPS_FALLBACK=1 (slow)"
    )
    assert _message(source, "npu").startswith("torch.mode runs aten::mode: not in torch_npu 2.14.0's kernels; torch_npu runs it on the CPU")


def test_a_cuda_only_operator_is_a_row_on_the_cpu():
    assert [f.start_line for f in migrated(TORCH + "y = torch.cudnn_convolution(x, w, p, s, d, 1, False, False, True)\n", "cpu").findings
            if f.code == CODE] == [2]
