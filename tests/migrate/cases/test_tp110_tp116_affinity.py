"""TP110-TP116, affinity: a faster API the target has for what a line does, as a row; with
--apply-affinity the optimizer swap (TP110), which keeps arguments and state_dict, is made."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, assert_migrates, assert_rows, per_target

CODES = ("TP110", "TP111", "TP112", "TP113", "TP114", "TP115", "TP116")

APPLIED = [
    pytest.param(
        TORCH + "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n",
        {
            "npu": TORCH_NPU + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3)\n"
            ),
            "xpu": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3)\n"
            ),
            "mps": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3)\n"
            ),
            "cpu": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3)\n"
            ),
            "accelerator": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdamW(model.parameters(), lr=1e-3)\n"
            ),
        },
        id="torch.optim.AdamW becomes torchport.optim.FusedAdamW",
    ),
    pytest.param(
        TORCH + (
            "from torch.optim import SGD\n"
            "optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "import torchport.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            ),
            "xpu": TORCH + (
                "import torchport.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            ),
            "mps": TORCH + (
                "import torchport.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            ),
            "cpu": TORCH + (
                "import torchport.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            ),
            "accelerator": TORCH + (
                "import torchport.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            ),
        },
        id="an imported SGD, its arguments kept",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n",
        {
            "default": [("TP110", 2, "AFFINITY")],
        },
        id="a fused optimizer, without --apply-affinity nothing changes (TP110)",
    ),
    pytest.param(
        TORCH + "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
        {
            "default": [("TP111", 2, "AFFINITY")],
        },
        id="clip_grad_norm_ (TP111)",
    ),
    pytest.param(
        TORCH + (
            "import torch.nn.functional as F\n"
            "def attend(q, k, v, scale):\n"
            "    return F.softmax(q @ k.transpose(-2, -1) / scale, dim=-1) @ v\n"
        ),
        {
            "default": [("TP112", 4, "AFFINITY")],
        },
        id="attention by hand (TP112)",
    ),
    pytest.param(
        TORCH + (
            "def rms_norm(x, eps=1e-6):\n"
            "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)\n"
        ),
        {
            "default": [("TP113", 3, "AFFINITY")],
        },
        id="RMSNorm by hand (TP113)",
    ),
    pytest.param(
        TORCH + (
            "def rotate_half(x):\n"
            "    x1, x2 = x.chunk(2, dim=-1)\n"
            "    return torch.cat((-x2, x1), dim=-1)\n"
        ),
        {
            "npu": [("TP114", 2, "AFFINITY")],
            "default": [],
        },
        id="rotate_half, on npu (TP114)",
    ),
    pytest.param(
        "import torch.nn.functional as F\n"
        "def swiglu(gate, up):\n"
        "    return F.silu(gate) * up\n",
        {
            "npu": [("TP115", 3, "AFFINITY")],
            "default": [],
        },
        id="SwiGLU by hand, on npu (TP115)",
    ),
    pytest.param(
        "import math\n"
        "import torch\n"
        "def gelu(x):\n"
        "    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))\n",
        {
            "default": [("TP116", 4, "AFFINITY")],
        },
        id="GELU's tanh approximation by hand (TP116)",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(APPLIED))
def test_the_optimizer_swap_is_made_with_apply_affinity(source, target, expected):
    assert_migrates(source, target, expected, apply_affinity=True)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_affinity_is_a_row_at_its_line(source, target, rows):
    assert_rows(source, target, rows, CODES)
