"""TP021, legacy CUDA tensor types (`torch.cuda.FloatTensor`) on targets without typed classes (xpu,
mps): each use written without the class; npu and cpu have the classes (TP004 renames them)."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP021"

CASES = [
    pytest.param(
        TORCH + "labels = torch.cuda.LongTensor([1, 0])\n",
        {
            "npu": TORCH_NPU + "labels = torch.npu.LongTensor([1, 0])\n",
            "xpu": TORCH + 'labels = torch.LongTensor([1, 0]).to("xpu")\n',
            "mps": TORCH + 'labels = torch.LongTensor([1, 0]).to("mps")\n',
            "cpu": TORCH + "labels = torch.LongTensor([1, 0])\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "labels = TENSOR_TYPES.LongTensor([1, 0])\n"
            ),
        },
        id="a constructor call",
    ),
    pytest.param(
        TORCH + "half = x.type(torch.cuda.HalfTensor)\n",
        {
            "npu": TORCH_NPU + "half = x.type(torch.npu.HalfTensor)\n",
            "xpu": TORCH + 'half = x.to("xpu", torch.float16)\n',
            "mps": TORCH + 'half = x.to("mps", torch.float16)\n',
            "cpu": TORCH + "half = x.type(torch.HalfTensor)\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "half = x.type(TENSOR_TYPES.HalfTensor)\n"
            ),
        },
        id="x.type(T)",
    ),
    pytest.param(
        TORCH + (
            "if isinstance(x, torch.cuda.FloatTensor):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "if isinstance(x, torch.npu.FloatTensor):\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                'if isinstance(x, torch.Tensor) and x.device.type == "xpu" and x.dtype == torch.float32:\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'if isinstance(x, torch.Tensor) and x.device.type == "mps" and x.dtype == torch.float32:\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                "if isinstance(x, torch.FloatTensor):\n"
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "if isinstance(x, TENSOR_TYPES.FloatTensor):\n"
                "    pass\n"
            ),
        },
        id="isinstance(x, T)",
    ),
    pytest.param(
        TORCH + "half = x.type(torch.cuda.HalfTensor, non_blocking=True)\n",
        {
            "npu": TORCH_NPU + "half = x.type(torch.npu.HalfTensor, non_blocking=True)\n",
            "xpu": TORCH + 'half = x.to("xpu", torch.float16, non_blocking=True)\n',
            "mps": TORCH + 'half = x.to("mps", torch.float16, non_blocking=True)\n',
            "cpu": TORCH + "half = x.type(torch.HalfTensor, non_blocking=True)\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "half = x.type(TENSOR_TYPES.HalfTensor, non_blocking=True)\n"
            ),
        },
        id="x.type(T, non_blocking=True)",
    ),
    pytest.param(
        TORCH + (
            "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
            "x = torch.zeros(3).type(Tensor)\n"
            "y = Tensor(2, 3).fill_(1.0)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "Tensor = torch.npu.FloatTensor if cuda else torch.FloatTensor\n"
                "x = torch.zeros(3).type(Tensor)\n"
                "y = Tensor(2, 3).fill_(1.0)\n"
            ),
            "cpu": TORCH + (
                "Tensor = torch.FloatTensor\n"
                "x = torch.zeros(3).type(Tensor)\n"
                "y = Tensor(2, 3).fill_(1.0)\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "Tensor = TENSOR_TYPES.FloatTensor if cuda else torch.FloatTensor\n"
                "x = torch.zeros(3).type(Tensor)\n"
                "y = Tensor(2, 3).fill_(1.0)\n"
            ),
            "default": UNCHANGED,
        },
        id="a class held in a name, then used: left where no value can stand for it",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_legacy_type_uses_keep_their_meaning(source, target, expected):
    assert_migrates(source, target, expected)
