"""TP009, `torch.backends.cudnn.<flag> = ...` and `torch.backends.cuda.<flag> = ...` have no effect
off CUDA: left in place (harmless), each noted; TF32's flags set HF32's on npu."""

import pytest

from _fixture_cases import TORCH, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP009"

CASES = [
    pytest.param(
        TORCH + "torch.backends.cudnn.benchmark = True\n",
        {
            "default": UNCHANGED,
        },
        id="torch.backends.cudnn.benchmark = True",
    ),
    pytest.param(
        TORCH + (
            "import torch.backends.cudnn as cudnn\n"
            "torch.backends.cuda.matmul.allow_tf32 = True\n"
            "cudnn.allow_tf32 = args.tf32\n"
        ),
        {
            "npu": TORCH + (
                "import torch.backends.cudnn as cudnn\n"
                "import torch_npu\n"
                "torch.npu.matmul.allow_hf32 = True\n"
                "torch.npu.conv.allow_hf32 = args.tf32\n"
            ),
            "default": UNCHANGED,
        },
        id="TF32's flags: HF32's on npu (matmul, convolution)",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "torch.backends.cudnn.benchmark = True\n",
        {
            "default": [("TP009", 2, "NOTE")],
        },
        id="torch.backends.cudnn.benchmark",
    ),
    pytest.param(
        TORCH + (
            "import torch.backends.cudnn as cudnn\n"
            "cudnn.deterministic = True\n"
            "torch.backends.cuda.matmul.allow_tf32 = True\n"
        ),
        {
            "npu": [("TP009", 3, "NOTE"), ("TP009", 4, "MODIFY")],
            "default": [("TP009", 3, "NOTE"), ("TP009", 4, "NOTE")],
        },
        id="an aliased cudnn module and a torch.backends.cuda flag",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_cudnn_flags_stay(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_each_flag_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
