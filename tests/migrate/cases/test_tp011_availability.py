"""TP011, `"cuda" if torch.cuda.is_available() else "cpu"` where the answer is known: the CPU branch on
cpu, the device type alone on accelerator; a script's demand for a GPU is kept, and noted on cpu."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP011"

CASES = [
    pytest.param(
        TORCH + 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
        {
            "npu": TORCH_NPU + 'device = torch.device("npu" if torch.npu.is_available() else "cpu")\n',
            "xpu": TORCH + 'device = torch.device("xpu" if torch.xpu.is_available() else "cpu")\n',
            "mps": TORCH + 'device = torch.device("mps" if torch.backends.mps.is_available() else "cpu")\n',
            "cpu": TORCH + 'device = torch.device("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "device = torch.device(DEVICE_TYPE)\n",
        },
        id="inside torch.device(...)",
    ),
    pytest.param(
        TORCH + 'device = "cuda" if torch.cuda.is_available() else "cpu"\n',
        {
            "npu": TORCH_NPU + 'device = "npu" if torch.npu.is_available() else "cpu"\n',
            "xpu": TORCH + 'device = "xpu" if torch.xpu.is_available() else "cpu"\n',
            "mps": TORCH + 'device = "mps" if torch.backends.mps.is_available() else "cpu"\n',
            "cpu": TORCH + 'device = "cpu"\n',
            "accelerator": TORCH_DEVICE_TYPE + "device = DEVICE_TYPE\n",
        },
        id="a device string chosen",
    ),
    pytest.param(
        TORCH + 'assert torch.cuda.is_available(), "this script needs a GPU"\n',
        {
            "npu": TORCH_NPU + 'assert torch.npu.is_available(), "this script needs a GPU"\n',
            "xpu": TORCH + 'assert torch.xpu.is_available(), "this script needs a GPU"\n',
            "mps": TORCH + 'assert torch.backends.mps.is_available(), "this script needs a GPU"\n',
            "cpu": TORCH + 'assert torch.cpu.is_available(), "this script needs a GPU"\n',
            "accelerator": TORCH + 'assert torch.accelerator.is_available(), "this script needs a GPU"\n',
        },
        id="an assert that demands a GPU is kept",
    ),
    pytest.param(
        "import sys\n"
        "import torch\n"
        "if not torch.cuda.is_available():\n"
        '    sys.exit("no GPU")\n',
        {
            "npu": (
                "import sys\n"
                "import torch\n"
                "import torch_npu\n"
                "if not torch.npu.is_available():\n"
                '    sys.exit("no GPU")\n'
            ),
            "xpu": (
                "import sys\n"
                "import torch\n"
                "if not torch.xpu.is_available():\n"
                '    sys.exit("no GPU")\n'
            ),
            "mps": (
                "import sys\n"
                "import torch\n"
                "if not torch.backends.mps.is_available():\n"
                '    sys.exit("no GPU")\n'
            ),
            "cpu": (
                "import sys\n"
                "import torch\n"
                "if not torch.cpu.is_available():\n"
                '    sys.exit("no GPU")\n'
            ),
            "accelerator": (
                "import sys\n"
                "import torch\n"
                "if not torch.accelerator.is_available():\n"
                '    sys.exit("no GPU")\n'
            ),
        },
        id="sys.exit without a GPU is kept",
    ),
    pytest.param(
        TORCH + "def simplify():\n    cuda = torch.cuda.is_available()\n"
        '    check_requirements(("onnxruntime-gpu" if cuda else "onnxruntime", "onnxslim"))\n',
        {"default": UNCHANGED},
        id="an answer held in a name that only picks a package's CUDA build is torch's own (YOLOv5's export.py)",
    ),
    pytest.param(
        TORCH + "def load(device, w):\n"
        '    cuda = torch.cuda.is_available() and device.type != "cpu"  # use CUDA\n'
        '    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]\n'
        '    check_requirements("paddlepaddle-gpu" if cuda else "paddlepaddle>=3.0.0")\n'
        "    if cuda:\n"
        "        config.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n",
        {"default": UNCHANGED},
        id="an and-ed answer that picks onnxruntime's providers, a package, Paddle's GPU: torch's own (YOLOv5's common.py)",
    ),
    pytest.param(
        TORCH + "check_requirements(f\"tensorflow{'' if torch.cuda.is_available() else '-macos' if MACOS else '-cpu'}\")\n",
        {"default": UNCHANGED},
        id="an answer that picks a package's name in an f-string is torch's own",
    ),
    pytest.param(
        TORCH + "cuda = torch.cuda.is_available()\n"
        'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
        "if cuda:\n    model.half()\n",
        {
            "npu": TORCH_NPU + "cuda = torch.npu.is_available()\n"
            'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
            "if cuda:\n    model.half()\n",
            "xpu": TORCH + "cuda = torch.xpu.is_available()\n"
            'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
            "if cuda:\n    model.half()\n",
            "mps": TORCH + "cuda = torch.backends.mps.is_available()\n"
            'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
            "if cuda:\n    model.half()\n",
            "cpu": TORCH + "cuda = torch.cpu.is_available()\n"
            'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
            "if cuda:\n    model.half()\n",
            "accelerator": TORCH + "cuda = torch.accelerator.is_available()\n"
            'runtime = "onnxruntime-gpu" if cuda else "onnxruntime"\n'
            "if cuda:\n    model.half()\n",
        },
        id="a name that is also asked about the device is the target's question, as before",
    ),
]

ROWS = [
    pytest.param(
        TORCH + 'assert torch.cuda.is_available(), "this script needs a GPU"\n',
        {
            "cpu": [("TP011", 2, "NOTE")],
            "default": [],
        },
        id="an assert that demands a GPU",
    ),
    pytest.param(
        "import sys\n"
        "import torch\n"
        "if not torch.cuda.is_available():\n"
        '    sys.exit("no GPU")\n',
        {
            "cpu": [("TP011", 3, "NOTE")],
            "default": [],
        },
        id="sys.exit without a GPU",
    ),
    pytest.param(
        TORCH + 'runtime = "onnxruntime-gpu" if torch.cuda.is_available() else "onnxruntime"\n',
        {"default": [("TP011", 2, "NOTE")]},
        id="an answer kept because it picks a package's CUDA build",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_availability_tests_with_a_known_answer(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_demand_for_a_gpu_is_noted_on_the_cpu(source, target, rows):
    assert_rows(source, target, rows, CODE)
