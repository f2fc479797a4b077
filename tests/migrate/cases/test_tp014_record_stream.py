"""TP014, `x.record_stream(s)`: CPU tensors have no caching allocator and reject it: dropped on cpu,
run only when an accelerator is present on accelerator, kept on device targets."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, assert_migrates, per_target

CODE = "TP014"

CASES = [
    pytest.param(
        TORCH + "y.record_stream(torch.cuda.current_stream())\n",
        {
            "npu": TORCH_NPU + "y.record_stream(torch.npu.current_stream())\n",
            "xpu": TORCH + "y.record_stream(torch.xpu.current_stream())\n",
            "mps": TORCH + "y.record_stream(torch.cpu.current_stream())\n",
            "cpu": "import torch\n",
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    y.record_stream(torch.accelerator.current_stream())\n"
            ),
        },
        id="with the current stream",
    ),
    pytest.param(
        TORCH + (
            "def copy(x, stream):\n"
            "    with torch.cuda.stream(stream):\n"
            '        y = x.to("cuda", non_blocking=True)\n'
            "    y.record_stream(stream)\n"
            "    return y\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def copy(x, stream):\n"
                "    with torch.npu.stream(stream):\n"
                '        y = x.to("npu", non_blocking=True)\n'
                "    y.record_stream(stream)\n"
                "    return y\n"
            ),
            "xpu": TORCH + (
                "def copy(x, stream):\n"
                "    with torch.xpu.stream(stream):\n"
                '        y = x.to("xpu", non_blocking=True)\n'
                "    y.record_stream(stream)\n"
                "    return y\n"
            ),
            "mps": TORCH + (
                "def copy(x, stream):\n"
                "    with torch.cuda.stream(stream):\n"
                '        y = x.to("mps", non_blocking=True)\n'
                "    y.record_stream(stream)\n"
                "    return y\n"
            ),
            "cpu": TORCH + (
                "def copy(x, stream):\n"
                "    with torch.cpu.stream(stream):\n"
                '        y = x.to("cpu", non_blocking=True)\n'
                "    return y\n"
            ),
            "accelerator": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "def copy(x, stream):\n"
                "    with contextlib.nullcontext():\n"
                "        y = x.to(DEVICE_TYPE, non_blocking=True)\n"
                "    if torch.accelerator.is_available():\n"
                "        y.record_stream(stream)\n"
                "    return y\n"
            ),
        },
        id="after a copy on a side stream",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_record_stream_only_where_there_is_an_allocator(source, target, expected):
    assert_migrates(source, target, expected)
