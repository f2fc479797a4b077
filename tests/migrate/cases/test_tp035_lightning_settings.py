"""TP035, Lightning's settings that name CUDA: accelerator "gpu" is the target's device type ("auto"
on accelerator), with a row where Lightning needs a plugin for it; on the CPU, float16 precision
is bfloat16."""

import pytest

from _fixture_cases import assert_migrates, assert_rows, per_target

CODE = "TP035"

CASES = [
    pytest.param(
        "import lightning as L\n"
        'trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed")\n'
        'label = dict(accelerator="gpu")\n',
        {
            "npu": (
                "import lightning as L\n"
                "import torch_npu\n"
                'trainer = L.Trainer(accelerator="npu", devices=1, precision="16-mixed")\n'
                'label = dict(accelerator="gpu")\n'
            ),
            "xpu": (
                "import lightning as L\n"
                'trainer = L.Trainer(accelerator="xpu", devices=1, precision="16-mixed")\n'
                'label = dict(accelerator="gpu")\n'
            ),
            "mps": (
                "import lightning as L\n"
                'trainer = L.Trainer(accelerator="mps", devices=1, precision="16-mixed")\n'
                'label = dict(accelerator="gpu")\n'
            ),
            "accelerator": (
                "import lightning as L\n"
                'trainer = L.Trainer(accelerator="auto", devices=1, precision="16-mixed")\n'
                'label = dict(accelerator="gpu")\n'
            ),
            "cpu": (
                "import lightning as L\n"
                'trainer = L.Trainer(accelerator="cpu", devices=1, precision="bf16-mixed")\n'
                'label = dict(accelerator="gpu")\n'
            ),
        },
        id="the Trainer's accelerator and precision; the same keyword elsewhere left",
    ),
    pytest.param(
        "from lightning.fabric import Fabric\n"
        'fabric = Fabric(accelerator="cuda", precision="bf16-mixed")\n',
        {
            "npu": "import torch_npu\nfrom lightning.fabric import Fabric\nfabric = Fabric(accelerator=\"npu\", precision=\"bf16-mixed\")\n",
            "xpu": 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="xpu", precision="bf16-mixed")\n',
            "mps": 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="mps", precision="bf16-mixed")\n',
            "cpu": 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu", precision="bf16-mixed")\n',
            "accelerator": 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="auto", precision="bf16-mixed")\n',
        },
        id="Fabric's \"cuda\": the target's device type, \"auto\" on accelerator (Lightning finds it); bfloat16 kept",
    ),
]

ROWS = [
    pytest.param(
        "from pytorch_lightning import Trainer\n"
        'trainer = Trainer(accelerator="gpu")\n',
        {
            "npu": [("TP035", 2, "MODIFY"), ("TP035", 2, "UNSUPPORTED")],
            "xpu": [("TP035", 2, "MODIFY"), ("TP035", 2, "UNSUPPORTED")],
            "default": [("TP035", 2, "MODIFY")],
        },
        id="an accelerator Lightning has no built-in for needs a plugin: a row",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_lightning_is_told_the_targets_device(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_device_lightning_lacks_is_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)
