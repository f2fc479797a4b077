"""TP110-TP116, affinity: a faster API the target has for what a line does, as a row; with
--apply-affinity the optimizer swap (TP110) is made where the twin takes the call's arguments with
the same meaning: torch_npu's own on npu, torchport.optim's elsewhere."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, migrated, per_target

CODES = ("TP110", "TP111", "TP112", "TP113", "TP114", "TP115", "TP116")

APPLIED = [
    pytest.param(
        TORCH + "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n",
        {
            "npu": TORCH_NPU + (
                "import torch_npu.optim\n"
                "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-3)\n"
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
        id="torch.optim.AdamW becomes NpuFusedAdamW on npu, torchport.optim.FusedAdamW elsewhere",
    ),
    pytest.param(
        TORCH + (
            "from torch.optim import SGD\n"
            "optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "import torch_npu.optim\n"
                "from torch.optim import SGD\n"
                "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)\n"
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
    pytest.param(
        TORCH + "optimizer = torch.optim.SGD(model.parameters(), 0.1, 0.9, 0, 1e-4, True)\n",
        {
            "npu": TORCH_NPU + (
                "import torch_npu.optim\n"
                "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), 0.1, 0.9, 0, 1e-4, True)\n"
            ),
            "default": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), 0.1, 0.9, 0, 1e-4, True)\n"
            ),
        },
        id="SGD's five parameters by position, in NpuFusedSGD's order",
    ),
    pytest.param(
        TORCH + "optimizer = torch.optim.Adam(params=model.parameters(), lr=1e-3, amsgrad=True)\n",
        {
            "npu": TORCH_NPU + (
                "import torch_npu.optim\n"
                "optimizer = torch_npu.optim.NpuFusedAdam(params=model.parameters(), lr=1e-3, amsgrad=True)\n"
            ),
            "default": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedAdam(params=model.parameters(), lr=1e-3, amsgrad=True)\n"
            ),
        },
        id="params= by keyword",
    ),
    pytest.param(
        TORCH + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, maximize=False)\n",
        {
            "npu": UNCHANGED,
            "default": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1, momentum=0.9, maximize=False)\n"
            ),
        },
        id="on npu a keyword NpuFusedSGD does not take leaves the call",
    ),
    pytest.param(
        TORCH + "optimizer = torch.optim.SGD(model.parameters())\n",
        {
            "npu": UNCHANGED,
            "default": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters())\n"
            ),
        },
        id="on npu an SGD without lr stays (NpuFusedSGD has no default lr)",
    ),
    pytest.param(
        TORCH + "optimizer = torch.optim.Adadelta(model.parameters(), 1.0, 0.9, 1e-6, 0, False)\n",
        {
            "default": UNCHANGED,
        },
        id="Adadelta's sixth positional argument (foreach), which no twin takes, keeps it",
    ),
    pytest.param(
        TORCH + "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)\n",
        {
            "default": UNCHANGED,
        },
        id="fused=, which no twin takes, keeps torch's AdamW",
    ),
    pytest.param(
        TORCH + (
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "optimizer.zero_grad(set_to_none=True)\n"
        ),
        {
            "npu": UNCHANGED,
            "default": TORCH + (
                "import torchport.optim\n"
                "optimizer = torchport.optim.FusedSGD(model.parameters(), lr=0.1)\n"
                "optimizer.zero_grad(set_to_none=True)\n"
            ),
        },
        id="on npu a file that zeroes with set_to_none=True keeps torch's optimizer",
    ),
    pytest.param(
        TORCH + "from timm.optim import Lamb\noptimizer = Lamb(model.parameters(), lr=1e-3)\n",
        {
            "npu": UNCHANGED,
            "default": TORCH + (
                "import torchport.optim\n"
                "from timm.optim import Lamb\n"
                "optimizer = torchport.optim.FusedLamb(model.parameters(), lr=1e-3)\n"
            ),
        },
        id="timm's Lamb: NpuFusedLamb is another LAMB, advice only on npu",
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


def _tp110_messages(source: str, target: str, apply_affinity: bool = False) -> list[str]:
    return [f.message for f in migrated(source, target, apply_affinity).findings if f.code == "TP110"]


def test_on_npu_the_row_names_torch_npus_twin_and_what_it_needs():
    (row,) = _tp110_messages(TORCH + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", "npu")
    assert row.startswith("torch_npu.optim.NpuFusedSGD: ")
    assert "float32 or float16" in row and "set_to_none=True" in row and "torchport" not in row
    (row,) = _tp110_messages(TORCH + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", "cpu")
    assert row.startswith("torchport.optim.FusedSGD: ")


def test_a_call_left_as_it_is_says_why():
    source = TORCH + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True, maximize=False)\n"
    (row,) = _tp110_messages(source, "npu", apply_affinity=True)
    assert "not swapped by --apply-affinity: it passes foreach=, maximize=, which the replacement does not take" in row
    (row,) = _tp110_messages(TORCH + "optimizer = torch.optim.SGD(model.parameters())\n", "npu")
    assert row.endswith("it passes no lr, which the replacement requires")
    (row,) = _tp110_messages(TORCH + "optimizer = torch.optim.SGD(*args, **kwargs)\n", "npu")
    assert row.endswith("its arguments come from * or **")


def test_with_ascends_apex_kept_the_row_names_apexs_twin_swapped_only_where_amp_combines_gradients():
    """Ascend's NpuFused optimizers step through amp.initialize(..., combine_grad=True) alone: the
    ModelZoo form (what --amp apex writes) gets the twin under --apply-affinity, other forms advice."""
    source = (TORCH + "from apex import amp\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "model, optimizer = amp.initialize(model, optimizer, opt_level=\"O2\", combine_grad=True)\n")
    result = migrated(source, "npu", True)
    advice, swap = sorted((f for f in result.findings if f.code == "TP110"), key=lambda f: f.operation.is_change)
    assert advice.message.startswith("apex.optimizers.NpuFusedSGD: ") and "amp.initialize" in advice.message
    assert swap.message.startswith("use apex.optimizers.NpuFusedSGD (--apply-affinity")
    assert "apex.optimizers.NpuFusedSGD(model.parameters(), lr=0.1)" in result.source.decode()
    uncombined = migrated(source.replace(", combine_grad=True", ""), "npu", True)
    assert "torch.optim.SGD(" in uncombined.source.decode()
