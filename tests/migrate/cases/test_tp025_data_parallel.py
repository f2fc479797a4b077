"""TP025, `nn.DataParallel` / `nn.parallel.data_parallel` on one device where torch's cannot run:
the call becomes the target's DataParallel (npu, xpu; torch's own on a CUDA build for accelerator), torch's
class is kept where it only wraps the module (cpu, mps), and `data_parallel()` (which finds no device
off CUDA) is applied once on every target. The definitions are written once, after the imports."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target
from torchport.targets.fallbacks import ONE_DEVICE_APPLY_FUNCTION, ONE_DEVICE_DATA_PARALLEL_CLASS

CODE = "TP025"

CLASS = "\n\n" + ONE_DEVICE_DATA_PARALLEL_CLASS + "\n\n\n"
BOTH = "\n\n" + ONE_DEVICE_DATA_PARALLEL_CLASS + "\n\n\n" + ONE_DEVICE_APPLY_FUNCTION + "\n\n\n"

CASES = [
    pytest.param(
        "import torch.nn as nn\n" + TORCH + "model = nn.DataParallel(model)\nif isinstance(model, nn.DataParallel):\n    net = model.module\n",
        {
            "npu": "import torch.nn as nn\n" + TORCH_NPU + CLASS
            + "model = OneDeviceDataParallel(model)\nif isinstance(model, nn.DataParallel):\n    net = model.module\n",
            "xpu": "import torch.nn as nn\n" + TORCH + CLASS
            + "model = OneDeviceDataParallel(model)\nif isinstance(model, nn.DataParallel):\n    net = model.module\n",
            "accelerator": "import torch.nn as nn\n" + TORCH + CLASS
            + "model = (torch.nn.DataParallel if torch.version.cuda else OneDeviceDataParallel)(model)\n"
            + "if isinstance(model, nn.DataParallel):\n    net = model.module\n",
            "default": UNCHANGED,
        },
        id="nn.DataParallel(model): isinstance tests left as they are",
    ),
    pytest.param(
        TORCH + "from torch.nn.parallel import DataParallel\nnet = DataParallel(net, device_ids=[0, 1], output_device=0)\n",
        {
            "npu": TORCH_NPU + "from torch.nn.parallel import DataParallel\n" + CLASS
            + 'net = OneDeviceDataParallel(net, device_ids=[0, 1], output_device="npu:0")\n',
            "cpu": TORCH + "from torch.nn.parallel import DataParallel\n"
            + 'net = DataParallel(net, device_ids=[0, 1], output_device="cpu")\n',
            "mps": TORCH + "from torch.nn.parallel import DataParallel\n"
            + 'net = DataParallel(net, device_ids=[0, 1], output_device="mps")\n',
            "default": None,
        },
        id="imported from torch.nn.parallel, over two devices: indices kept as ints",
    ),
    pytest.param(
        TORCH + "out = torch.nn.parallel.data_parallel(net, x, device_ids=gpus)\n",
        {
            "cpu": TORCH + BOTH + "out = one_device_data_parallel(net, x, device_ids=gpus)\n",
            "mps": TORCH + BOTH + "out = one_device_data_parallel(net, x, device_ids=gpus)\n",
            "xpu": TORCH + BOTH + "out = one_device_data_parallel(net, x, device_ids=gpus)\n",
            "npu": TORCH_NPU + BOTH + "out = one_device_data_parallel(net, x, device_ids=gpus)\n",
            "accelerator": TORCH + BOTH
            + "out = (torch.nn.parallel.data_parallel if torch.version.cuda else one_device_data_parallel)(net, x, device_ids=gpus)\n",
        },
        id="data_parallel(module, inputs): torch's finds no device off CUDA",
    ),
    pytest.param(
        TORCH + "class Parallel(torch.nn.DataParallel):\n    pass\n",
        {"default": UNCHANGED},
        id="a subclass of DataParallel: left alone",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "model = torch.nn.DataParallel(model)\n",
        {"npu": [("TP025", 2, "MODIFY")], "xpu": [("TP025", 2, "MODIFY")],
         "accelerator": [("TP025", 2, "MODIFY")], "default": []},
        id="a change row where the call changes",
    ),
]


def _expanded(cases):
    """per_target, where the case's "default" None stands for the xpu/accelerator outputs written out."""
    return [p for p in per_target(cases) if p.values[2] is not None]


@pytest.mark.parametrize(("source", "target", "expected"), _expanded(CASES))
def test_data_parallel_runs_on_one_device(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_data_parallel_rows(source, target, rows):
    assert_rows(source, target, rows, CODE)
