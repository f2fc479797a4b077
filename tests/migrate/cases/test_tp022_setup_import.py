"""TP022, npu: `torch.npu` exists only once `torch_npu` is imported: a file that uses it (code ported
partly by hand) gets `import torch_npu`, before its first import of torch.npu, else after `import torch`."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP022"

CASES = [
    pytest.param(
        TORCH + "torch.npu.synchronize()\n",
        {
            "npu": TORCH_NPU + "torch.npu.synchronize()\n",
            "default": UNCHANGED,
        },
        id="torch.npu used after import torch",
    ),
    pytest.param(
        TORCH + (
            "from torch.npu import amp\n"
            "with amp.autocast():\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "from torch.npu import amp\n"
                "with amp.autocast():\n"
                "    pass\n"
            ),
            "default": UNCHANGED,
        },
        id="from torch.npu import amp",
    ),
    pytest.param(
        TORCH + (
            "import torch_npu\n"
            "torch.npu.synchronize()\n"
        ),
        {
            "default": UNCHANGED,
        },
        id="a file that imports torch_npu already",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_torch_npu_is_imported_where_torch_npu_is_used(source, target, expected):
    assert_migrates(source, target, expected)
