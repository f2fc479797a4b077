"""TP032: FSDP1 where the target has no device."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import FSDP1, FSDP1_CLASSES, FSDP1_WITHOUT_DEVICE
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule


class Fsdp1WithoutDeviceRule(Rule):
    """`FullyShardedDataParallel(model, ...)` on a target without a device (the CPU): torch refuses
    it there, so it is an unsupported row naming the ways out (FSDP2's fully_shard, DDP); the call
    is left as it is."""

    code = "TP032"
    order = 115
    mentions = rb"FullyShardedDataParallel"
    reads = tuple(sorted(FSDP1_CLASSES))
    title = "FSDP1 without a device"
    readme = """FSDP1 (`FullyShardedDataParallel`) on cpu: unsupported (torch refuses the CPU), naming FSDP2's `fully_shard`
    and DDP"""
    sample = (
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "\n"
        "\n"
        "def wrap(model):\n"
        "    return FSDP(model)\n"
    )

    @classmethod
    def applies_to(cls, target) -> bool:
        return not target.has_device

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.qualified_name(node.func) in FSDP1_CLASSES:
            self.report(node, Operation.UNSUPPORTED, FSDP1_WITHOUT_DEVICE, api=FSDP1)
