"""TP001, device strings: "cuda" and "cuda:<i>" name the target's device, in every way scripts
build one; a string that only mentions CUDA is text, and stays."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP001"

CASES = [
    pytest.param(
        TORCH + (
            'device = device or f"cuda"\n'
            'x = torch.zeros(2, device=f"cuda:1")\n'
            'name = f"cuda_{rank}"\n'
        ),
        {
            "npu": TORCH_NPU + 'device = device or "npu"\nx = torch.zeros(2, device="npu:1")\nname = f"cuda_{rank}"\n',
            "xpu": TORCH + 'device = device or "xpu"\nx = torch.zeros(2, device="xpu:1")\nname = f"cuda_{rank}"\n',
            "mps": TORCH + 'device = device or "mps"\nx = torch.zeros(2, device="mps")\nname = f"cuda_{rank}"\n',
            "cpu": TORCH + 'device = device or "cpu"\nx = torch.zeros(2, device="cpu")\nname = f"cuda_{rank}"\n',
            "accelerator": TORCH_DEVICE_TYPE + (
                "device = device or DEVICE_TYPE\n"
                'x = torch.zeros(2, device=f"{DEVICE_TYPE}:1")\n'
                'name = f"cuda_{rank}"\n'
            ),
        },
        id="an f-string with nothing to format is the device it spells (llama-cookbook's f\"cuda\")",
    ),
    pytest.param(
        TORCH + 'device = torch.device("cuda")\n',
        {
            "npu": TORCH_NPU + 'device = torch.device("npu")\n',
            "xpu": TORCH + 'device = torch.device("xpu")\n',
            "mps": TORCH + 'device = torch.device("mps")\n',
            "cpu": TORCH + 'device = torch.device("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "device = torch.device(DEVICE_TYPE)\n",
        },
        id='torch.device("cuda")',
    ),
    pytest.param(
        TORCH + 'x = torch.ones(2, device="cuda:1")\n',
        {
            "npu": TORCH_NPU + 'x = torch.ones(2, device="npu:1")\n',
            "xpu": TORCH + 'x = torch.ones(2, device="xpu:1")\n',
            "mps": TORCH + 'x = torch.ones(2, device="mps")\n',
            "cpu": TORCH + 'x = torch.ones(2, device="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'x = torch.ones(2, device=f"{DEVICE_TYPE}:1")\n',
        },
        id="an indexed device as a keyword: the index goes where the target has one device",
    ),
    pytest.param(
        TORCH + "x = torch.zeros(2).to(device='cuda:0')\n",
        {
            "npu": TORCH_NPU + "x = torch.zeros(2).to(device='npu:0')\n",
            "xpu": TORCH + "x = torch.zeros(2).to(device='xpu:0')\n",
            "mps": TORCH + "x = torch.zeros(2).to(device='mps')\n",
            "cpu": TORCH + "x = torch.zeros(2).to(device='cpu')\n",
            "accelerator": TORCH_DEVICE_TYPE + 'x = torch.zeros(2).to(device=f"{DEVICE_TYPE}:0")\n',
        },
        id="a keyword device in single quotes",
    ),
    pytest.param(
        TORCH + 'y = x.to(f"cuda:{rank}")\n',
        {
            "npu": TORCH_NPU + 'y = x.to(f"npu:{rank}")\n',
            "xpu": TORCH + 'y = x.to(f"xpu:{rank}")\n',
            "mps": TORCH + 'y = x.to("mps")\n',
            "cpu": TORCH + 'y = x.to("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'y = x.to(f"{DEVICE_TYPE}:{rank}")\n',
        },
        id="an f-string index",
    ),
    pytest.param(
        TORCH + 'z = x.to("cuda:%d" % rank)\n',
        {
            "npu": TORCH_NPU + 'z = x.to("npu:%d" % rank)\n',
            "xpu": TORCH + 'z = x.to("xpu:%d" % rank)\n',
            "mps": TORCH + 'z = x.to("mps")\n',
            "cpu": TORCH + 'z = x.to("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'z = x.to(f"{DEVICE_TYPE}:%d" % rank)\n',
        },
        id="a %-formatted index",
    ),
    pytest.param(
        TORCH + "v = x.to('cuda:{}'.format(rank))\n",
        {
            "npu": TORCH_NPU + "v = x.to('npu:{}'.format(rank))\n",
            "xpu": TORCH + "v = x.to('xpu:{}'.format(rank))\n",
            "mps": TORCH + "v = x.to('mps')\n",
            "cpu": TORCH + "v = x.to('cpu')\n",
            "accelerator": TORCH_DEVICE_TYPE + "v = x.to(f'{DEVICE_TYPE}:{{}}'.format(rank))\n",
        },
        id="a str.format index",
    ),
    pytest.param(
        TORCH + 'w = x.to("cuda:" + str(rank))\n',
        {
            "npu": TORCH_NPU + 'w = x.to("npu:" + str(rank))\n',
            "xpu": TORCH + 'w = x.to("xpu:" + str(rank))\n',
            "mps": TORCH + 'w = x.to("mps")\n',
            "cpu": TORCH + 'w = x.to("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'w = x.to(f"{DEVICE_TYPE}:" + str(rank))\n',
        },
        id="an index concatenated",
    ),
    pytest.param(
        TORCH + 'idx = torch.device("cuda", rank)\n',
        {
            "npu": TORCH_NPU + 'idx = torch.device("npu", rank)\n',
            "xpu": TORCH + 'idx = torch.device("xpu", rank)\n',
            "mps": TORCH + 'idx = torch.device("mps")\n',
            "cpu": TORCH + 'idx = torch.device("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "idx = torch.device(DEVICE_TYPE, rank)\n",
        },
        id="the type and index apart",
    ),
    pytest.param(
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', default='cuda', help='device to use (cuda or cpu)')\n",
        {
            "npu": (
                "import argparse\n"
                "\n"
                "import torch_npu\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--device', default='npu', help='device to use (npu or cpu)')\n"
            ),
            "xpu": (
                "import argparse\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--device', default='xpu', help='device to use (xpu or cpu)')\n"
            ),
            "mps": (
                "import argparse\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--device', default='mps', help='device to use (mps or cpu)')\n"
            ),
            "cpu": (
                "import argparse\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--device', default='cpu', help='device to use (cpu)')\n"
            ),
            "accelerator": (
                "import argparse\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--device', default=DEVICE_TYPE, help='device to use (cuda or cpu)')\n"
            ),
        },
        id="an option's default, and the help that names it",
    ),
    pytest.param(
        TORCH + (
            "def f():\n"
            '    """Runs on "cuda"."""\n'
            '    return "cuda"\n'
        ),
        {
            "npu": TORCH_NPU + (
                "def f():\n"
                '    """Runs on "cuda"."""\n'
                '    return "npu"\n'
            ),
            "xpu": TORCH + (
                "def f():\n"
                '    """Runs on "cuda"."""\n'
                '    return "xpu"\n'
            ),
            "mps": TORCH + (
                "def f():\n"
                '    """Runs on "cuda"."""\n'
                '    return "mps"\n'
            ),
            "cpu": TORCH + (
                "def f():\n"
                '    """Runs on "cuda"."""\n'
                '    return "cpu"\n'
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "def f():\n"
                '    """Runs on "cuda"."""\n'
                "    return DEVICE_TYPE\n"
            ),
        },
        id="a returned device string changes, the docstring that mentions one does not",
    ),
    pytest.param(
        TORCH + (
            'print("training on cuda")\n'
            'path = "checkpoints/cuda_best.pt"\n'
        ),
        {
            "default": UNCHANGED,
        },
        id="log messages and file names that mention cuda stay",
    ),
    pytest.param(
        TORCH + (
            "use = args['cuda'] or getattr(args, 'cuda', False)\n"
            "counts = {'cuda': 0}\n"
        ),
        {
            "default": UNCHANGED,
        },
        id="a key or attribute named cuda stays",
    ),
    pytest.param(
        TORCH + "quoted = [x.to('cuda:%d' % rank), x.to('cuda:{}'.format(rank)), x.to('cuda:' + str(rank))]\n",
        {
            "npu": TORCH_NPU + "quoted = [x.to('npu:%d' % rank), x.to('npu:{}'.format(rank)), x.to('npu:' + str(rank))]\n",
            "xpu": TORCH + "quoted = [x.to('xpu:%d' % rank), x.to('xpu:{}'.format(rank)), x.to('xpu:' + str(rank))]\n",
            "mps": TORCH + "quoted = [x.to('mps'), x.to('mps'), x.to('mps')]\n",
            "cpu": TORCH + "quoted = [x.to('cpu'), x.to('cpu'), x.to('cpu')]\n",
            "accelerator": TORCH_DEVICE_TYPE + "quoted = [x.to(f'{DEVICE_TYPE}:%d' % rank), x.to(f'{DEVICE_TYPE}:{{}}'.format(rank)), x.to(f'{DEVICE_TYPE}:' + str(rank))]\n",
        },
        id="each computed form in single quotes",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_device_strings_name_the_target(source, target, expected):
    assert_migrates(source, target, expected)
