"""TP019, on cpu, a script's hint that a CUDA device goes unused ("You have a CUDA device, so you
should probably run with --cuda") would say something false: dropped, with an `if` left empty."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, assert_migrates, per_target

CODE = "TP019"

CASES = [
    pytest.param(
        "import argparse\n"
        "import torch\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--cuda", action="store_true")\n'
        "args = parser.parse_args()\n"
        "if torch.cuda.is_available() and not args.cuda:\n"
        '    print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n',
        {
            "npu": (
                "import argparse\n"
                "import torch\n"
                "import torch_npu\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cuda", action="store_true")\n'
                "args = parser.parse_args()\n"
                "if torch.npu.is_available() and not args.cuda:\n"
                '    print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "xpu": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cuda", action="store_true")\n'
                "args = parser.parse_args()\n"
                "if torch.xpu.is_available() and not args.cuda:\n"
                '    print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "mps": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cuda", action="store_true")\n'
                "args = parser.parse_args()\n"
                "if torch.backends.mps.is_available() and not args.cuda:\n"
                '    print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "cpu": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cuda", action="store_true")\n'
                "args = parser.parse_args()\n"
            ),
            "accelerator": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--cuda", action="store_true")\n'
                "args = parser.parse_args()\n"
                "if torch.accelerator.is_available() and not args.cuda:\n"
                '    print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
            ),
        },
        id="the hint under an availability test and the script's switch",
    ),
    pytest.param(
        TORCH + (
            "if torch.cuda.is_available():\n"
            "    if not args.cuda:\n"
            '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
            "    else:\n"
            "        torch.cuda.manual_seed(args.seed)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "if torch.npu.is_available():\n"
                "    if not args.cuda:\n"
                '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
                "    else:\n"
                "        torch.npu.manual_seed(args.seed)\n"
            ),
            "xpu": TORCH + (
                "if torch.xpu.is_available():\n"
                "    if not args.cuda:\n"
                '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
                "    else:\n"
                "        torch.xpu.manual_seed(args.seed)\n"
            ),
            "mps": TORCH + (
                "if torch.backends.mps.is_available():\n"
                "    if not args.cuda:\n"
                '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
                "    else:\n"
                "        torch.mps.manual_seed(args.seed)\n"
            ),
            "cpu": TORCH + (
                "if torch.cpu.is_available():\n"
                "    if args.cuda:\n"
                "        torch.manual_seed(args.seed)\n"
            ),
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    if not args.cuda:\n"
                '        print("WARNING: You have a CUDA device, so you should probably run with --cuda")\n'
                "    else:\n"
                "        torch.manual_seed(args.seed)\n"
            ),
        },
        id="the test is kept where it guards other code",
    ),
    pytest.param(
        TORCH + (
            "if torch.cuda.is_available():\n"
            '    print("training on", torch.cuda.get_device_name(0))\n'
        ),
        {
            "npu": TORCH_NPU + (
                "if torch.npu.is_available():\n"
                '    print("training on", torch.npu.get_device_name(0))\n'
            ),
            "xpu": TORCH + (
                "if torch.xpu.is_available():\n"
                '    print("training on", torch.xpu.get_device_name(0))\n'
            ),
            "mps": (
                "import platform\n"
                "\n"
                "import torch\n"
                "if torch.backends.mps.is_available():\n"
                '    print("training on", platform.processor())\n'
            ),
            "cpu": (
                "import platform\n"
                "\n"
                "import torch\n"
                "if torch.cpu.is_available():\n"
                '    print("training on", platform.processor())\n'
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "if torch.accelerator.is_available():\n"
                '    print("training on", DEVICE_TYPE)\n'
            ),
        },
        id="a message that only names the device stays",
    ),
    pytest.param(
        "import logging\n"
        "import torch\n"
        "logger = logging.getLogger(__name__)\n"
        "if torch.cuda.is_available() and not args.cuda:\n"
        '    logger.warning("You have a CUDA device, so you should probably run with --cuda")\n',
        {
            "npu": (
                "import logging\n"
                "import torch\n"
                "import torch_npu\n"
                "logger = logging.getLogger(__name__)\n"
                "if torch.npu.is_available() and not args.cuda:\n"
                '    logger.warning("You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "xpu": (
                "import logging\n"
                "import torch\n"
                "logger = logging.getLogger(__name__)\n"
                "if torch.xpu.is_available() and not args.cuda:\n"
                '    logger.warning("You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "mps": (
                "import logging\n"
                "import torch\n"
                "logger = logging.getLogger(__name__)\n"
                "if torch.backends.mps.is_available() and not args.cuda:\n"
                '    logger.warning("You have a CUDA device, so you should probably run with --cuda")\n'
            ),
            "cpu": (
                "import logging\n"
                "import torch\n"
                "logger = logging.getLogger(__name__)\n"
            ),
            "accelerator": (
                "import logging\n"
                "import torch\n"
                "logger = logging.getLogger(__name__)\n"
                "if torch.accelerator.is_available() and not args.cuda:\n"
                '    logger.warning("You have a CUDA device, so you should probably run with --cuda")\n'
            ),
        },
        id="the hint logged",
    ),
    pytest.param(
        TORCH + (
            "if args.cuda:\n"
            "    dtype = torch.cuda.FloatTensor\n"
            "else:\n"
            "    # a GPU left idle?\n"
            "    if torch.cuda.is_available():\n"
            '        print("WARNING: You have a CUDA device, so you should probably set cuda=True")\n'
            "    dtype = torch.FloatTensor\n"
        ),
        {
            "npu": TORCH_NPU + (
                "if args.cuda:\n"
                "    dtype = torch.npu.FloatTensor\n"
                "else:\n"
                "    # a GPU left idle?\n"
                "    if torch.npu.is_available():\n"
                '        print("WARNING: You have a CUDA device, so you should probably set cuda=True")\n'
                "    dtype = torch.FloatTensor\n"
            ),
            "xpu": TORCH + (
                "if args.cuda:\n"
                "    dtype = torch.cuda.FloatTensor\n"
                "else:\n"
                "    # a GPU left idle?\n"
                "    if torch.xpu.is_available():\n"
                '        print("WARNING: You have a CUDA device, so you should probably set cuda=True")\n'
                "    dtype = torch.FloatTensor\n"
            ),
            "mps": TORCH + (
                "if args.cuda:\n"
                "    dtype = torch.cuda.FloatTensor\n"
                "else:\n"
                "    # a GPU left idle?\n"
                "    if torch.backends.mps.is_available():\n"
                '        print("WARNING: You have a CUDA device, so you should probably set cuda=True")\n'
                "    dtype = torch.FloatTensor\n"
            ),
            "cpu": TORCH + (
                "if args.cuda:\n"
                "    dtype = torch.FloatTensor\n"
                "else:\n"
                "    # a GPU left idle?\n"
                "    dtype = torch.FloatTensor\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "if args.cuda:\n"
                "    dtype = TENSOR_TYPES.FloatTensor\n"
                "else:\n"
                "    # a GPU left idle?\n"
                "    if torch.accelerator.is_available():\n"
                '        print("WARNING: You have a CUDA device, so you should probably set cuda=True")\n'
                "    dtype = torch.FloatTensor\n"
            ),
        },
        id="the hint in an else branch, under a comment",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_hints_to_use_a_gpu_go_on_the_cpu(source, target, expected):
    assert_migrates(source, target, expected)
