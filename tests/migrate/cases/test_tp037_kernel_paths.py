"""TP037, kernel paths the target lacks or runs otherwise (Triton kernels, FP8, FlexAttention,
torch.compile and its CUDA graphs) and SDPA kernel choices the target's device has no kernel for:
rows only, the code as written."""

import itertools

import pytest
import torch
import torch.nn.functional as F

from _fixture_cases import UNCHANGED, assert_migrates, assert_rows, per_target
from torchport.migrate.rules.kernel_paths import sdpa_kernels
from torchport import targets

CODE = "TP037"

TRITON = (
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "@triton.autotune(configs=[], key=['n'])\n"
    "@triton.jit\n"
    "def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
)
FP8 = (
    "import torch\n"
    "w8 = weight.to(torch.float8_e4m3fn)\n"
    "y = torch._scaled_mm(x.to(torch.float8_e4m3fn), w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)\n"
)
FLEX = (
    "from torch.nn.attention.flex_attention import create_block_mask, flex_attention\n"
    "mask = create_block_mask(causal, None, None, 1024, 1024)\n"
    "out = flex_attention(q, k, v, block_mask=mask)\n"
)
COMPILE = (
    "import torch\n"
    "model = torch.compile(model)\n"
    'step = torch.compile(step, mode="reduce-overhead")\n'
    "\n"
    "\n"
    "@torch.compile\n"
    "def loss_of(x):\n"
    "    return x.sum()\n"
)
KERNEL_LANGUAGES = (
    "import cutlass.cute as cute\n"
    "import tilelang\n"
    "from kernels import get_kernel\n"
    "\n"
    "\n"
    "@cute.kernel\n"
    "def rmsnorm_kernel(x, w, out):\n"
    "    pass\n"
    "\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def chunk_scan(batch, seqlen):\n"
    "    pass\n"
    "\n"
    "\n"
    'activation = get_kernel("kernels-community/activation", version=1)\n'
)
SDPA = (
    "import torch\n"
    "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
    "with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):\n"
    "    out = attention(q, k, v)\n"
    "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n"
    "    out = attention(q, k, v)\n"
    "with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False):\n"
    "    out = attention(q, k, v)\n"
    "torch.backends.cuda.enable_math_sdp(False)\n"
    "torch.backends.cuda.enable_mem_efficient_sdp(False)\n"
    "with sdpa_kernel(backends):\n"
    "    out = attention(q, k, v)\n"
)

CASES = [pytest.param(source, {"default": UNCHANGED}, id=name)
         for name, source in (("triton", TRITON), ("fp8", FP8), ("flex", FLEX), ("compile", COMPILE), ("sdpa", SDPA),
                                       ("kernel-languages", KERNEL_LANGUAGES))]


def _rows(operation, *lines):
    return [(CODE, line, operation) for line in lines]


ROWS = [
    pytest.param(TRITON, {"npu": _rows("UNSUPPORTED", 7), "cpu": _rows("UNSUPPORTED", 7), "mps": _rows("UNSUPPORTED", 7),
                          "accelerator": _rows("NOTE", 7), "default": []},
                 id="a Triton kernel, once at its def: lacking on npu (triton-ascend), cpu and mps"),
    pytest.param(FP8, {"npu": _rows("UNSUPPORTED", 2, 3), "mps": _rows("UNSUPPORTED", 2, 3),
                       "cpu": _rows("NOTE", 2, 3), "accelerator": _rows("NOTE", 2, 3), "default": []},
                 id="FP8 dtypes and _scaled_mm: the dtypes inside the call are its row"),
    pytest.param(FLEX, {"npu": _rows("UNSUPPORTED", 2, 3), "accelerator": _rows("NOTE", 2, 3), "default": []},
                 id="FlexAttention has no NPU kernel"),
    pytest.param(COMPILE, {"npu": [*_rows("NOTE", 2), *_rows("UNSUPPORTED", 3), *_rows("NOTE", 6)],
                           "cpu": _rows("NOTE", 3), "mps": _rows("NOTE", 3), "default": []},
                 id="torch.compile on npu, and the mode that captures CUDA graphs"),
    pytest.param(KERNEL_LANGUAGES, {**{t: [*_rows("UNSUPPORTED", 7, 12), *_rows("NOTE", 16)] for t in ("npu", "cpu", "mps")},
                                     "accelerator": _rows("NOTE", 7, 12, 16), "default": []},
                 id="CuTe DSL and TileLang kernels at their def, like Triton's; a Hub kernel: builds per backend"),
    pytest.param(SDPA, {"cpu": [*_rows("UNSUPPORTED", 3, 7), *_rows("NOTE", 9)], "default": []},
                 id="an SDPA choice with no CPU kernel; math turned off; a choice not spelled out says nothing"),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_nothing_is_rewritten(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_kernel_path_the_target_lacks_is_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)


BACKENDS = ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")


@pytest.mark.parametrize("chosen", [c for n in range(1, 5) for c in itertools.combinations(BACKENDS, n)], ids=str)
def test_the_cpu_kernels_the_data_names_are_the_ones_torch_runs_here(chosen):
    """What the kernel data says the CPU has (the rows' reason) is what this torch does: a choice
    runs exactly where it keeps one of them."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(1, 2, 8, 4)
    try:
        with sdpa_kernel([getattr(SDPBackend, name) for name in chosen]):
            F.scaled_dot_product_attention(q, q, q)
        ran = True
    except RuntimeError:
        ran = False
    assert ran == bool(set(chosen) & sdpa_kernels(targets.get("cpu")))
