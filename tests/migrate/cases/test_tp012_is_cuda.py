"""TP012, `x.is_cuda` asks "is this on the accelerator?" and keeps its answer: `.is_npu`, `.is_xpu`,
`.is_mps`; left on the CPU, where it is false as it should be; a device-type test on accelerator."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP012"

CASES = [
    pytest.param(
        TORCH + (
            "def to_device(batch):\n"
            "    if not batch.is_cuda:\n"
            "        batch = batch.cuda()\n"
            "    return batch\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def to_device(batch):\n"
                "    if not batch.is_npu:\n"
                "        batch = batch.npu()\n"
                "    return batch\n"
            ),
            "xpu": TORCH + (
                "def to_device(batch):\n"
                "    if not batch.is_xpu:\n"
                "        batch = batch.xpu()\n"
                "    return batch\n"
            ),
            "mps": TORCH + (
                "def to_device(batch):\n"
                "    if not batch.is_mps:\n"
                '        batch = batch.to("mps")\n'
                "    return batch\n"
            ),
            "cpu": TORCH + (
                "def to_device(batch):\n"
                "    if not batch.is_cuda:\n"
                "        batch = batch.cpu()\n"
                "    return batch\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "def to_device(batch):\n"
                '    if not (batch.device.type == DEVICE_TYPE != "cpu"):\n'
                "        batch = batch.to(DEVICE_TYPE)\n"
                "    return batch\n"
            ),
        },
        id="a negated test in a function",
    ),
    pytest.param(
        TORCH + "on_gpu = [t.is_cuda for t in tensors]\n",
        {
            "npu": TORCH_NPU + "on_gpu = [t.is_npu for t in tensors]\n",
            "xpu": TORCH + "on_gpu = [t.is_xpu for t in tensors]\n",
            "mps": TORCH + "on_gpu = [t.is_mps for t in tensors]\n",
            "accelerator": TORCH_DEVICE_TYPE + 'on_gpu = [t.device.type == DEVICE_TYPE != "cpu" for t in tensors]\n',
            "default": UNCHANGED,
        },
        id="in a comprehension",
    ),
    pytest.param(
        TORCH + "def forward(input, target):\n    assert input.is_cuda and target.is_cuda\n    return input\n",
        {
            "npu": TORCH_NPU + "def forward(input, target):\n    assert input.is_npu and target.is_npu\n    return input\n",
            "xpu": TORCH + "def forward(input, target):\n    assert input.is_xpu and target.is_xpu\n    return input\n",
            "mps": TORCH + "def forward(input, target):\n    assert input.is_mps and target.is_mps\n    return input\n",
            "cpu": TORCH + "def forward(input, target):\n    assert input.is_cpu and target.is_cpu\n    return input\n",
            "accelerator": TORCH_DEVICE_TYPE + "def forward(input, target):\n"
                           "    assert input.device.type == DEVICE_TYPE and target.device.type == DEVICE_TYPE\n"
                           "    return input\n",
        },
        id="asserted (flash-attn's cross-entropy): on the target's device, the CPU included",
    ),
    pytest.param(
        TORCH + 'def to_numpy(x):\n    assert not x.is_cuda, "host tensors only"\n    return x.numpy()\n',
        {
            "npu": TORCH_NPU + 'def to_numpy(x):\n    assert not x.is_npu, "host tensors only"\n    return x.numpy()\n',
            "xpu": TORCH + 'def to_numpy(x):\n    assert not x.is_xpu, "host tensors only"\n    return x.numpy()\n',
            "mps": TORCH + 'def to_numpy(x):\n    assert not x.is_mps, "host tensors only"\n    return x.numpy()\n',
            "cpu": UNCHANGED,
            "accelerator": TORCH_DEVICE_TYPE + 'def to_numpy(x):\n'
                           '    assert not (x.device.type == DEVICE_TYPE != "cpu"), "host tensors only"\n'
                           '    return x.numpy()\n',
        },
        id="asserted not: on the host, its answer kept",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_is_cuda_keeps_its_answer(source, target, expected):
    assert_migrates(source, target, expected)
