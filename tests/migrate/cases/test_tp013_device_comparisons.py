"""TP013, comparisons with "cuda" ask "are we on the accelerator?" and keep their answer: true
on the target's device, false on the CPU (left as is there), DEVICE_TYPE != "cpu" on accelerator."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP013"

CASES = [
    pytest.param(
        TORCH + (
            'dtype = torch.float16 if accelerator.device.type in ("cuda", "xpu") else torch.float32\n'
            'if activation.device.type not in ["cuda", "xpu", "npu"]:  # skip CPU tensors\n'
            "    pass\n"
            'gpu = str(device).startswith("cuda")\n'
        ),
        {
            "npu": TORCH_NPU + (
                'dtype = torch.float16 if accelerator.device.type in ("npu", "xpu") else torch.float32\n'
                'if activation.device.type not in ["npu", "xpu", "npu"]:  # skip CPU tensors\n'
                "    pass\n"
                'gpu = str(device).startswith("npu")\n'
            ),
            "xpu": TORCH + (
                'dtype = torch.float16 if accelerator.device.type in ("xpu", "xpu") else torch.float32\n'
                'if activation.device.type not in ["xpu", "xpu", "npu"]:  # skip CPU tensors\n'
                "    pass\n"
                'gpu = str(device).startswith("xpu")\n'
            ),
            "mps": TORCH + (
                'dtype = torch.float16 if accelerator.device.type in ("mps", "xpu") else torch.float32\n'
                'if activation.device.type not in ["mps", "xpu", "npu"]:  # skip CPU tensors\n'
                "    pass\n"
                'gpu = str(device).startswith("mps")\n'
            ),
            "default": UNCHANGED,
        },
        id="device types written out in a membership test, and a prefix test: the target's device; left on cpu and "
           "accelerator (CUDA's name holds on a CUDA host, not on the CPU)",
    ),
    pytest.param(
        TORCH + (
            'if args.device.type == "cuda":\n'
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                'if args.device.type == "npu":\n'
                "    pass\n"
            ),
            "xpu": TORCH + (
                'if args.device.type == "xpu":\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'if args.device.type == "mps":\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'if args.device.type == DEVICE_TYPE != "cpu":\n'
                "    pass\n"
            ),
            "default": UNCHANGED,
        },
        id='device.type == "cuda"',
    ),
    pytest.param(
        TORCH + (
            "use_fused = device_type == 'cuda'\n"
            'pin = "cuda" != device_type\n'
        ),
        {
            "npu": TORCH_NPU + (
                "use_fused = device_type == 'npu'\n"
                'pin = "npu" != device_type\n'
            ),
            "xpu": TORCH + (
                "use_fused = device_type == 'xpu'\n"
                'pin = "xpu" != device_type\n'
            ),
            "mps": TORCH + (
                "use_fused = device_type == 'mps'\n"
                'pin = "mps" != device_type\n'
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "use_fused = device_type == DEVICE_TYPE != 'cpu'\n"
                'pin = device_type != DEVICE_TYPE or DEVICE_TYPE == "cpu"\n'
            ),
            "default": UNCHANGED,
        },
        id="== and != in either order",
    ),
    pytest.param(
        TORCH + "on_gpu = 'cuda' in str(device) and use_fused\n",
        {
            "npu": TORCH_NPU + "on_gpu = 'npu' in str(device) and use_fused\n",
            "xpu": TORCH + "on_gpu = 'xpu' in str(device) and use_fused\n",
            "mps": TORCH + "on_gpu = 'mps' in str(device) and use_fused\n",
            "accelerator": TORCH_DEVICE_TYPE + "on_gpu = (DEVICE_TYPE != 'cpu' and DEVICE_TYPE in str(device)) and use_fused\n",
            "default": UNCHANGED,
        },
        id='"cuda" in str(device)',
    ),
    pytest.param(
        TORCH + "device_type = 'cuda' if 'cuda' in device else 'cpu'\n",
        {
            "npu": TORCH_NPU + "device_type = 'npu' if 'npu' in device else 'cpu'\n",
            "xpu": TORCH + "device_type = 'xpu' if 'xpu' in device else 'cpu'\n",
            "mps": TORCH + "device_type = 'mps' if 'mps' in device else 'cpu'\n",
            "cpu": TORCH + "device_type = 'cpu'\n",
            "accelerator": TORCH_DEVICE_TYPE + "device_type = DEVICE_TYPE if DEVICE_TYPE != 'cpu' and DEVICE_TYPE in device else 'cpu'\n",
        },
        id="a device type chosen by a membership test (TP001 names the chosen device)",
    ),
    pytest.param(
        TORCH + (
            "def f(x):\n"
            '    if x.device == torch.device("cuda"):\n'
            "        return 1\n"
            "    return x.device != torch.device('cuda')\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def f(x):\n"
                '    if x.device == torch.device("npu"):\n'
                "        return 1\n"
                "    return x.device != torch.device('npu')\n"
            ),
            "xpu": TORCH + (
                "def f(x):\n"
                '    if x.device == torch.device("xpu"):\n'
                "        return 1\n"
                "    return x.device != torch.device('xpu')\n"
            ),
            "mps": TORCH + (
                "def f(x):\n"
                '    if x.device == torch.device("mps"):\n'
                "        return 1\n"
                "    return x.device != torch.device('mps')\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "def f(x):\n"
                '    if x.device == torch.device(DEVICE_TYPE) != torch.device("cpu"):\n'
                "        return 1\n"
                "    return x.device != torch.device(DEVICE_TYPE) or torch.device(DEVICE_TYPE) == torch.device('cpu')\n"
            ),
            "default": UNCHANGED,
        },
        id='a device compared with torch.device("cuda")',
    ),
    pytest.param(
        TORCH + 'off_gpu = not "cuda" not in device\n',
        {
            "npu": TORCH_NPU + 'off_gpu = not "npu" not in device\n',
            "xpu": TORCH + 'off_gpu = not "xpu" not in device\n',
            "mps": TORCH + 'off_gpu = not "mps" not in device\n',
            "accelerator": TORCH_DEVICE_TYPE + 'off_gpu = not (DEVICE_TYPE == "cpu" or DEVICE_TYPE not in device)\n',
            "default": UNCHANGED,
        },
        id="a double negation",
    ),
    pytest.param(
        TORCH + (
            "if args.get('cuda'):\n"
            "    pass\n"
        ),
        {
            "default": UNCHANGED,
        },
        id="a key named cuda is not a comparison",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_comparisons_with_cuda_keep_their_answer(source, target, expected):
    assert_migrates(source, target, expected)
