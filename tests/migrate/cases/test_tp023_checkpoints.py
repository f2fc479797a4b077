"""TP023, checkpoints: `torch.load` and `torch.jit.load` without a map_location (or with None) load
onto the target's device, since torch restores each storage where it was saved (a GPU)."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP023"

CASES = [
    pytest.param(
        TORCH + "checkpoint = torch.load(args.resume)\n",
        {
            "npu": TORCH_NPU + 'checkpoint = torch.load(args.resume, map_location="npu")\n',
            "xpu": TORCH + 'checkpoint = torch.load(args.resume, map_location="xpu")\n',
            "mps": TORCH + 'checkpoint = torch.load(args.resume, map_location="mps")\n',
            "cpu": TORCH + 'checkpoint = torch.load(args.resume, map_location="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "checkpoint = torch.load(args.resume, map_location=DEVICE_TYPE)\n",
        },
        id="torch.load(path)",
    ),
    pytest.param(
        TORCH + "best = torch.load(path, map_location=None, weights_only=True)\n",
        {
            "npu": TORCH_NPU + 'best = torch.load(path, map_location="npu", weights_only=True)\n',
            "xpu": TORCH + 'best = torch.load(path, map_location="xpu", weights_only=True)\n',
            "mps": TORCH + 'best = torch.load(path, map_location="mps", weights_only=True)\n',
            "cpu": TORCH + 'best = torch.load(path, map_location="cpu", weights_only=True)\n',
            "accelerator": TORCH_DEVICE_TYPE + "best = torch.load(path, map_location=DEVICE_TYPE, weights_only=True)\n",
        },
        id="map_location=None, other keywords kept",
    ),
    pytest.param(
        TORCH + 'scripted = torch.jit.load("model.pt")\n',
        {
            "npu": TORCH_NPU + 'scripted = torch.jit.load("model.pt", map_location="npu")\n',
            "xpu": TORCH + 'scripted = torch.jit.load("model.pt", map_location="xpu")\n',
            "mps": TORCH + 'scripted = torch.jit.load("model.pt", map_location="mps")\n',
            "cpu": TORCH + 'scripted = torch.jit.load("model.pt", map_location="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'scripted = torch.jit.load("model.pt", map_location=DEVICE_TYPE)\n',
        },
        id="torch.jit.load",
    ),
    pytest.param(
        "from torch import load\n"
        'state = load("ckpt.pt")\n',
        {
            "npu": (
                "import torch_npu\n"
                "from torch import load\n"
                'state = load("ckpt.pt", map_location="npu")\n'
            ),
            "xpu": (
                "from torch import load\n"
                'state = load("ckpt.pt", map_location="xpu")\n'
            ),
            "mps": (
                "from torch import load\n"
                'state = load("ckpt.pt", map_location="mps")\n'
            ),
            "cpu": (
                "from torch import load\n"
                'state = load("ckpt.pt", map_location="cpu")\n'
            ),
            "accelerator": TORCH + (
                "from torch import load\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                'state = load("ckpt.pt", map_location=DEVICE_TYPE)\n'
            ),
        },
        id="from torch import load",
    ),
    pytest.param(
        TORCH + 'state = torch.load(path, map_location=f"cuda:{args.gpu}")\n',
        {
            "npu": TORCH_NPU + 'state = torch.load(path, map_location=f"npu:{args.gpu}")\n',
            "xpu": TORCH + 'state = torch.load(path, map_location=f"xpu:{args.gpu}")\n',
            "mps": TORCH + 'state = torch.load(path, map_location="mps")\n',
            "cpu": TORCH + 'state = torch.load(path, map_location="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "state = torch.load(path, map_location=DEVICE_TYPE)\n",
        },
        id="a map_location that names CUDA is the device-string rules' (TP001)",
    ),
    pytest.param(
        TORCH + 'moved = torch.load(args.resume, map_location={"cuda:1": "cuda:0"})\n',
        {
            "npu": TORCH_NPU + 'moved = torch.load(args.resume, map_location={"cuda:1": "npu:0"})\n',
            "xpu": TORCH + 'moved = torch.load(args.resume, map_location={"cuda:1": "xpu:0"})\n',
            "mps": TORCH + 'moved = torch.load(args.resume, map_location={"cuda:1": "mps"})\n',
            "cpu": TORCH + 'moved = torch.load(args.resume, map_location={"cuda:1": "cpu"})\n',
            "accelerator": TORCH_DEVICE_TYPE + 'moved = torch.load(args.resume, map_location={"cuda:1": DEVICE_TYPE})\n',
        },
        id="a map_location dict: only its device values change",
    ),
    pytest.param(
        TORCH + "state = torch.load(*args, **kwargs)\n",
        {
            "default": UNCHANGED,
        },
        id="*args and **kwargs may hold a location: left alone",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_checkpoints_load_onto_the_target(source, target, expected):
    assert_migrates(source, target, expected)
