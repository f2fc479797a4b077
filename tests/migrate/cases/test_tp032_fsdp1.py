"""TP032, FSDP1 on a target without a device: torch refuses FullyShardedDataParallel on the CPU
("FSDP needs a non-CPU accelerator device"), so the call is an unsupported row naming FSDP2's
fully_shard and DDP; the code is left as it is, and the targets with a device take it as written."""

import pytest

from _fixture_cases import assert_rows, per_target

CODE = "TP032"

SOURCE = (
    "import torch\n"
    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
    "from torch.distributed import fsdp\n"
    "\n"
    "model = FSDP(torch.nn.Linear(4, 4), sync_module_states=True)\n"
    "other = fsdp.FullyShardedDataParallel(torch.nn.Linear(4, 4))\n"
    "shard = fsdp.fully_shard\n"
)

ROWS = [
    pytest.param(
        SOURCE,
        {"cpu": [("TP032", 5, "UNSUPPORTED"), ("TP032", 6, "UNSUPPORTED")], "default": []},
        id="FSDP1 by its alias and through its module, on cpu alone; FSDP2 is no row",
    ),
]


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_fsdp1_without_a_device_is_unsupported(source, target, rows):
    assert_rows(source, target, rows, CODE)
