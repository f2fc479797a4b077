"""TP003, `.cuda()`: the target's own method where it has one (`.npu()`, `.xpu()`, `.cpu()`),
else `.to(<device>)`; on accelerator `.cuda(d)` keeps its meaning for every kind `d` may be."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, assert_migrates, per_target

CODE = "TP003"

CASES = [
    pytest.param(
        TORCH + "model = torch.nn.Linear(2, 2).cuda()\n",
        {
            "npu": TORCH_NPU + "model = torch.nn.Linear(2, 2).npu()\n",
            "xpu": TORCH + "model = torch.nn.Linear(2, 2).xpu()\n",
            "mps": TORCH + 'model = torch.nn.Linear(2, 2).to("mps")\n',
            "cpu": TORCH + "model = torch.nn.Linear(2, 2).cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + "model = torch.nn.Linear(2, 2).to(DEVICE_TYPE)\n",
        },
        id="a module moved with .cuda()",
    ),
    pytest.param(
        TORCH + "x = torch.ones(2).cuda(non_blocking=True)\n",
        {
            "npu": TORCH_NPU + "x = torch.ones(2).npu(non_blocking=True)\n",
            "xpu": TORCH + "x = torch.ones(2).xpu(non_blocking=True)\n",
            "mps": TORCH + 'x = torch.ones(2).to("mps", non_blocking=True)\n',
            "cpu": TORCH + "x = torch.ones(2).cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + "x = torch.ones(2).to(DEVICE_TYPE, non_blocking=True)\n",
        },
        id="non_blocking is kept where the target copies asynchronously",
    ),
    pytest.param(
        TORCH + "y = torch.ones(2).cuda(0)\n",
        {
            "npu": TORCH_NPU + "y = torch.ones(2).npu(0)\n",
            "xpu": TORCH + "y = torch.ones(2).xpu(0)\n",
            "mps": TORCH + 'y = torch.ones(2).to("mps")\n',
            "cpu": TORCH + "y = torch.ones(2).cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + "y = torch.ones(2).to(torch.device(DEVICE_TYPE, 0))\n",
        },
        id="a literal index",
    ),
    pytest.param(
        TORCH + "y = torch.ones(2).cuda(args.gpu)\n",
        {
            "npu": TORCH_NPU + "y = torch.ones(2).npu(args.gpu)\n",
            "xpu": TORCH + "y = torch.ones(2).xpu(args.gpu)\n",
            "mps": TORCH + 'y = torch.ones(2).to("mps")\n',
            "cpu": TORCH + "y = torch.ones(2).cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                "\n"
                "\n"
                "def accelerator_device(device=None):\n"
                '    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""\n'
                "    index = device if device is None or isinstance(device, int) else torch.device(device).index\n"
                "    return torch.device(DEVICE_TYPE, index)\n"
                "\n"
                "\n"
                "y = torch.ones(2).to(accelerator_device(args.gpu))\n"
            ),
        },
        id="an index the rewrite cannot tell from a device goes through accelerator_device",
    ),
    pytest.param(
        TORCH + (
            'device = torch.device("cuda:1")\n'
            "z = torch.ones(2).cuda(device)\n"
        ),
        {
            "npu": TORCH_NPU + (
                'device = torch.device("npu:1")\n'
                "z = torch.ones(2).npu(device)\n"
            ),
            "xpu": TORCH + (
                'device = torch.device("xpu:1")\n'
                "z = torch.ones(2).xpu(device)\n"
            ),
            "mps": TORCH + (
                'device = torch.device("mps")\n'
                'z = torch.ones(2).to("mps")\n'
            ),
            "cpu": TORCH + (
                'device = torch.device("cpu")\n'
                "z = torch.ones(2).cpu()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'device = torch.device(f"{DEVICE_TYPE}:1")\n'
                "z = torch.ones(2).to(device)\n"
            ),
        },
        id="a device held in a name moves as it is",
    ),
    pytest.param(
        TORCH + "w = torch.ones(2).cuda('cuda:0', non_blocking=True)\n",
        {
            "npu": TORCH_NPU + "w = torch.ones(2).npu('npu:0', non_blocking=True)\n",
            "xpu": TORCH + "w = torch.ones(2).xpu('xpu:0', non_blocking=True)\n",
            "mps": TORCH + "w = torch.ones(2).to('mps', non_blocking=True)\n",
            "cpu": TORCH + "w = torch.ones(2).cpu()\n",
            "accelerator": TORCH_DEVICE_TYPE + 'w = torch.ones(2).to(f"{DEVICE_TYPE}:0", non_blocking=True)\n',
        },
        id="a device string and non_blocking",
    ),
    pytest.param(
        TORCH + "moved = (x.cuda if torch.cuda.is_available() else x.cpu)()\n",
        {
            "npu": TORCH_NPU + "moved = (x.npu if torch.npu.is_available() else x.cpu)()\n",
            "xpu": TORCH + "moved = (x.xpu if torch.xpu.is_available() else x.cpu)()\n",
            "mps": (
                "import functools\n"
                "\n"
                "import torch\n"
                'moved = (functools.partial(x.to, "mps") if torch.backends.mps.is_available() else x.cpu)()\n'
            ),
            "cpu": TORCH + "moved = x.cpu()\n",
            "accelerator": (
                "import functools\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "moved = (functools.partial(x.to, DEVICE_TYPE) if torch.accelerator.is_available() else x.cpu)()\n"
            ),
        },
        id="a .cuda method chosen by a conditional",
    ),
    pytest.param(
        TORCH + "ema = torch.load(path, map_location=lambda storage, loc: storage.cuda())\n",
        {
            "npu": TORCH_NPU + "ema = torch.load(path, map_location=lambda storage, loc: storage.npu())\n",
            "xpu": TORCH + 'ema = torch.load(path, map_location=lambda storage, loc: storage.to(device="xpu"))\n',
            "mps": TORCH + 'ema = torch.load(path, map_location=lambda storage, loc: storage.to(device="mps"))\n',
            "cpu": TORCH + "ema = torch.load(path, map_location=lambda storage, loc: storage.cpu())\n",
            "accelerator": TORCH_DEVICE_TYPE + "ema = torch.load(path, map_location=lambda storage, loc: storage.to(device=DEVICE_TYPE))\n",
        },
        id="the storage of a map_location lambda",
    ),
    pytest.param(
        TORCH + (
            "def step(batch):\n"
            "    inputs, labels = batch\n"
            "    return inputs.cuda(), labels.cuda()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def step(batch):\n"
                "    inputs, labels = batch\n"
                "    return inputs.npu(), labels.npu()\n"
            ),
            "xpu": TORCH + (
                "def step(batch):\n"
                "    inputs, labels = batch\n"
                "    return inputs.xpu(), labels.xpu()\n"
            ),
            "mps": TORCH + (
                "def step(batch):\n"
                "    inputs, labels = batch\n"
                '    return inputs.to("mps"), labels.to("mps")\n'
            ),
            "cpu": TORCH + (
                "def step(batch):\n"
                "    inputs, labels = batch\n"
                "    return inputs.cpu(), labels.cpu()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "def step(batch):\n"
                "    inputs, labels = batch\n"
                "    return inputs.to(DEVICE_TYPE), labels.to(DEVICE_TYPE)\n"
            ),
        },
        id="two calls on one line, in a function",
    ),
    pytest.param(
        TORCH + (
            "v = torch.ones(2).cuda(x.device)\n"
            "u = torch.ones(2).cuda(torch.cuda.current_device())\n"
        ),
        {
            "npu": TORCH_NPU + (
                "v = torch.ones(2).npu(x.device)\n"
                "u = torch.ones(2).npu(torch.npu.current_device())\n"
            ),
            "xpu": TORCH + (
                "v = torch.ones(2).xpu(x.device)\n"
                "u = torch.ones(2).xpu(torch.xpu.current_device())\n"
            ),
            "mps": TORCH + (
                'v = torch.ones(2).to("mps")\n'
                'u = torch.ones(2).to("mps")\n'
            ),
            "cpu": TORCH + (
                "v = torch.ones(2).cpu()\n"
                "u = torch.ones(2).cpu()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "\n"
                "\n"
                "def accelerator_device(device=None):\n"
                '    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""\n'
                "    index = device if device is None or isinstance(device, int) else torch.device(device).index\n"
                "    return torch.device(DEVICE_TYPE, index)\n"
                "\n"
                "\n"
                "v = torch.ones(2).to(x.device)\n"
                "u = torch.ones(2).to(accelerator_device((torch.accelerator.current_device_index() if torch.accelerator.is_available() else 0)))\n"
            ),
        },
        id="a device attribute and torch.cuda.current_device()",
    ),
    pytest.param(
        TORCH + "ema = torch.load(args.ema, map_location=lambda storage, loc: storage.cuda(args.gpu))\n",
        {
            "npu": TORCH_NPU + "ema = torch.load(args.ema, map_location=lambda storage, loc: storage.npu(args.gpu))\n",
            "xpu": TORCH + 'ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device=torch.device("xpu", args.gpu)))\n',
            "mps": TORCH + 'ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device="mps"))\n',
            "cpu": TORCH + "ema = torch.load(args.ema, map_location=lambda storage, loc: storage.cpu())\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                "\n"
                "\n"
                "def accelerator_device(device=None):\n"
                '    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""\n'
                "    index = device if device is None or isinstance(device, int) else torch.device(device).index\n"
                "    return torch.device(DEVICE_TYPE, index)\n"
                "\n"
                "\n"
                "ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device=accelerator_device(args.gpu)))\n"
            ),
        },
        id="the storage of a map_location lambda, with an index",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_cuda_calls_move_to_the_target(source, target, expected):
    assert_migrates(source, target, expected)
