"""TP016, pinned memory: with no device there is nothing to pin for (torch raises or warns), so on cpu
`x.pin_memory()` is `x` and `pin_memory=` goes; on accelerator both apply only with a device."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP016"

CASES = [
    pytest.param(
        TORCH + "staging = torch.empty(4, pin_memory=True)\n",
        {
            "cpu": TORCH + "staging = torch.empty(4)\n",
            "accelerator": TORCH + "staging = torch.empty(4, pin_memory=torch.accelerator.is_available())\n",
            "default": UNCHANGED,
        },
        id="pin_memory=True on a factory",
    ),
    pytest.param(
        TORCH + (
            "from torch.utils.data import DataLoader\n"
            "loader = DataLoader(dataset, batch_size=1, pin_memory=True)\n"
        ),
        {
            "cpu": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "loader = DataLoader(dataset, batch_size=1)\n"
            ),
            "accelerator": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "loader = DataLoader(dataset, batch_size=1, pin_memory=torch.accelerator.is_available())\n"
            ),
            "default": UNCHANGED,
        },
        id="a DataLoader's pin_memory",
    ),
    pytest.param(
        TORCH + 'x = x.pin_memory().to("cuda", non_blocking=True)\n',
        {
            "npu": TORCH_NPU + 'x = x.pin_memory().to("npu", non_blocking=True)\n',
            "xpu": TORCH + 'x = x.pin_memory().to("xpu", non_blocking=True)\n',
            "mps": TORCH + 'x = x.pin_memory().to("mps", non_blocking=True)\n',
            "cpu": TORCH + 'x = x.to("cpu", non_blocking=True)\n',
            "accelerator": TORCH_DEVICE_TYPE + "x = (x.pin_memory() if torch.accelerator.is_available() else x).to(DEVICE_TYPE, non_blocking=True)\n",
        },
        id=".pin_memory() before a copy",
    ),
    pytest.param(
        TORCH + 'kwargs = dict(num_workers=0, pin_memory=True, pin_memory_device="cuda")\n',
        {
            "npu": TORCH_NPU + 'kwargs = dict(num_workers=0, pin_memory=True, pin_memory_device="npu")\n',
            "xpu": TORCH + 'kwargs = dict(num_workers=0, pin_memory=True, pin_memory_device="xpu")\n',
            "mps": TORCH + 'kwargs = dict(num_workers=0, pin_memory=True, pin_memory_device="mps")\n',
            "cpu": TORCH + 'kwargs = dict(num_workers=0, pin_memory_device="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "kwargs = dict(num_workers=0, pin_memory=torch.accelerator.is_available(), pin_memory_device=DEVICE_TYPE)\n",
        },
        id="in dict() keyword arguments, with pin_memory_device",
    ),
    pytest.param(
        TORCH + (
            "from torch.utils.data import DataLoader\n"
            "use_cuda = torch.cuda.is_available()\n"
            "loader = DataLoader(dataset, batch_size=1, pin_memory=use_cuda)\n"
            "y = torch.zeros(2).pin_memory()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "from torch.utils.data import DataLoader\n"
                "use_cuda = torch.npu.is_available()\n"
                "loader = DataLoader(dataset, batch_size=1, pin_memory=use_cuda)\n"
                "y = torch.zeros(2).pin_memory()\n"
            ),
            "xpu": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "use_cuda = torch.xpu.is_available()\n"
                "loader = DataLoader(dataset, batch_size=1, pin_memory=use_cuda)\n"
                "y = torch.zeros(2).pin_memory()\n"
            ),
            "mps": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "use_cuda = torch.backends.mps.is_available()\n"
                "loader = DataLoader(dataset, batch_size=1, pin_memory=use_cuda)\n"
                "y = torch.zeros(2).pin_memory()\n"
            ),
            "cpu": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "use_cuda = torch.cpu.is_available()\n"
                "loader = DataLoader(dataset, batch_size=1)\n"
                "y = torch.zeros(2)\n"
            ),
            "accelerator": TORCH + (
                "from torch.utils.data import DataLoader\n"
                "use_cuda = torch.accelerator.is_available()\n"
                "loader = DataLoader(dataset, batch_size=1, pin_memory=use_cuda and torch.accelerator.is_available())\n"
                "y = torch.zeros(2).pin_memory()\n"
            ),
        },
        id="a flag from an availability test, and an unnamed tensor pinned",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "y = torch.zeros(2).pin_memory()\n",
        {
            "cpu": [("TP016", 2, "MODIFY")],
            "accelerator": [("TP016", 2, "NOTE")],
            "default": [],
        },
        id="an unnamed tensor pinned is noted on accelerator",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_memory_is_pinned_only_where_there_is_a_device(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_what_cannot_be_guarded_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
