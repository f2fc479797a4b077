"""TP026: a torch name that does not exist in the pinned torch (a typo, or an API torch removed),
reported at its line on every target, with the nearest name that exists or the replacement torch
names; names the data cannot judge, and code that asks whether a name exists first, say nothing."""

import pytest

from _fixture_cases import TORCH, assert_rows, migrated, per_target

CODE = "TP026"
UNKNOWN = "UNKNOWN"

ROWS = [
    pytest.param(
        TORCH + (
            "if rank != -1:\n"
            "    indices = torch.zeros([dataset.n], dtype=torch.int)\n"
            "    if rank == 0:\n"
            "        indices[:] = torch.from_tensor(dataset.indices, dtype=torch.int)\n"
        ),
        {"default": [(CODE, 5, UNKNOWN)]},
        id="a ModelZoo trainer's torch.from_tensor",
    ),
    pytest.param(
        "from torch import from_tensor, zeros\n"
        "x = from_tensor(values)\n"
        "y = zeros(3)\n",
        {"default": [(CODE, 1, UNKNOWN)]},
        id="a missing name imported from torch: at the import, not again at each use",
    ),
    pytest.param(
        TORCH + "evals, evecs = torch.symeig(sim_mat, eigenvectors=True)\n",
        {"default": [(CODE, 2, UNKNOWN)]},
        id="an API torch keeps only to raise that it was removed",
    ),
    pytest.param(
        "import torch.nn.functionl as F\n"
        "y = F.relu(x)\n",
        {"default": [(CODE, 1, UNKNOWN)]},
        id="a misspelled module: its import, not its uses",
    ),
    pytest.param(
        "from torch import nn\n"
        "import torch.nn.functional as F\n"
        "layer = nn.Linaer(4, 4)\n"
        "y = F.rleu(layer(x))\n"
        "z = x.add_(1)\n",
        {"default": [(CODE, 3, UNKNOWN), (CODE, 4, UNKNOWN)]},
        id="misspellings through `from torch import nn` and `as F`",
    ),
    pytest.param(
        "import torch as th\n"
        "from torch.nn import functional as F\n"
        "from torch.nn.functionl import relu\n"
        "y = F.gelu_(th.from_tensor(x))\n",
        {"default": [(CODE, 3, UNKNOWN), (CODE, 4, UNKNOWN), (CODE, 4, UNKNOWN)]},
        id="`import torch as th`, `from torch.nn import functional as F`, a from-import of a misspelled module",
    ),
    pytest.param(
        TORCH + (
            "import torch.distributed as dist\n"
            "group = dist.ProcessGroupNCCL.Options()\n"
        ),
        {"default": []},
        id="a name other builds of torch have (imported under `except ImportError` in torch's own source)",
    ),
    pytest.param(
        TORCH + (
            "import torch.nn.functional as F\n"
            "torch.backends.cudnn.benchmark = True\n"
            "torch.cuda.synchronise()\n"
            "handle = torch._C._get_tracing_state()\n"
            "torch.my_helper = lambda x: x\n"
            "y = F.upsample(x, scale_factor=2)\n"
            "optimizer = torch.optim.Adam(model.parameters())\n"
            "torch.optim.Adam.step(optimizer)\n"
            "g = torch.fx.symbolic_trace(model)\n"
            "ok = torch.backends.mps.is_available()\n"
            "z = torch.Tensor.add_(x, 1)\n"
            "z = torch.ops.mylib.custom_op(x)\n"
            "# torch.from_tensor in a comment\n"
            "doc = 'torch.from_tensor in a string'\n"
        ),
        {"default": []},
        id="what the data cannot judge or exists: cuda (TP004), private, assigned, deprecated, class attributes, unwalked, open",
    ),
    pytest.param(
        TORCH + (
            "import torch.nn.functional as F\n"
            "if hasattr(torch, 'set_deterministic'):\n"
            "    torch.set_deterministic(True)\n"
            "try:\n"
            "    torch.set_deterministic(True)\n"
            "except AttributeError:\n"
            "    torch.use_deterministic_algorithms(True)\n"
            "if torch.__version__ < '1.8':\n"
            "    q, r = torch.qr(a)\n"
            "    x = torch.solve(b, a)\n"
            "def forward(F, x: torch.JitType) -> torch.NoSuchType:\n"
            "    return F.no_such_function(x)\n"
        ),
        {"default": []},
        id="code that asks first (hasattr, try/except AttributeError, a version test), annotations, a parameter named F",
    ),
    pytest.param(
        TORCH + "import torch_npu\nx = torch.npu.current_device()\nok = torch.hpu.is_available()\n",
        {"default": []},
        id="the names a target's package adds to torch (torch.npu), or one for a device type torch knows (torch.hpu)",
    ),
    pytest.param(
        "from torch.autograd.variable import Variable\n"
        "import torch\n"
        "v = torch.autograd.variable(x)\n"
        "if hasattr(torch, 'set_deterministic') and torch.set_deterministic:\n"
        "    pass\n",
        {"default": [(CODE, 3, UNKNOWN)]},
        id="a module a removed function shadows is imported fine; the function is not; a hasattr test guards itself",
    ),
]


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS, cuda_takes_default=True))  # (a typo is one on CUDA too)
def test_an_unknown_torch_name_is_a_row_at_its_line(source, target, rows):
    assert_rows(source, target, rows, CODE)


def _messages(source: str) -> list[str]:
    return [f.message for f in migrated(source, "npu").findings if f.code == CODE]


def test_the_row_names_the_nearest_existing_name_or_the_replacement_torch_names():
    assert _messages(TORCH + "y = torch.nn.functional.rleu(x)\n") == [
        "torch.nn.functional.rleu does not exist in torch 2.13.0; nearest: torch.nn.functional.relu"
    ]
    assert _messages(TORCH + "x = torch.solve(b, a)\n") == [
        "torch.solve was removed from torch; in torch 2.13.0 it only raises: use torch.linalg.solve"
    ]


def test_the_row_says_which_api_is_missing_not_the_whole_expression():
    rows = [f for f in migrated(TORCH + "y = torch.from_tensor.zeros\n", "cpu").findings if f.code == CODE]
    assert [f.api for f in rows] == ["torch.from_tensor"]
