"""TP015, `convert_sync_batchnorm(model)`: DDP refuses SyncBatchNorm on the CPU, so the model keeps its
BatchNorm there (`model = model` goes, and an `if` that only chose it); on accelerator, only with a device."""

import pytest

from _fixture_cases import TORCH, UNCHANGED, assert_migrates, per_target

CODE = "TP015"

CASES = [
    pytest.param(
        "import torch.nn as nn\n"
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
        {
            "cpu": "import torch.nn as nn\n",
            "accelerator": TORCH + (
                "import torch.nn as nn\n"
                "model = (nn.SyncBatchNorm.convert_sync_batchnorm(model) if torch.accelerator.is_available() else model)\n"
            ),
            "default": UNCHANGED,
        },
        id="nn.SyncBatchNorm through an alias",
    ),
    pytest.param(
        TORCH + (
            "if args.sync_bn:\n"
            "    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
            "model = model.to(device)\n"
        ),
        {
            "cpu": TORCH + "model = model.to(device)\n",
            "accelerator": TORCH + (
                "if args.sync_bn:\n"
                "    model = (torch.nn.SyncBatchNorm.convert_sync_batchnorm(model) if torch.accelerator.is_available() else model)\n"
                "model = model.to(device)\n"
            ),
            "default": UNCHANGED,
        },
        id="an if that only chose it goes on the CPU",
    ),
    pytest.param(
        TORCH + "net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group)\n",
        {
            "cpu": TORCH + "net = model\n",
            "accelerator": TORCH + "net = (torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group) if torch.accelerator.is_available() else model)\n",
            "default": UNCHANGED,
        },
        id="a process group argument, bound to another name",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_sync_batchnorm_only_where_there_is_a_device(source, target, expected):
    assert_migrates(source, target, expected)
