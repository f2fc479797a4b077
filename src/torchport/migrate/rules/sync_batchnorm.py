"""TP015: `nn.SyncBatchNorm.convert_sync_batchnorm(model)`."""

from __future__ import annotations

import libcst as cst

from torchport.apis.devices import Presence
from torchport.apis.distributed import CONVERT_SYNC_BATCHNORM, sync_batchnorm
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import call_argument, only_when
from torchport.migrate.rules.base.rule import Rule

CONVERT = CONVERT_SYNC_BATCHNORM


class SyncBatchNormRule(Rule):
    """SyncBatchNorm runs on CUDA-like devices only: on the CPU, DDP refuses a model that has it
    ("SyncBatchNorm layers only work with GPU modules"). Where the target may be the CPU, the
    model keeps its BatchNorm layers: `convert_sync_batchnorm(model)` is `model` on the CPU
    target (so `model = model` is left, and goes: see folding.py) and is converted only when an
    accelerator is present on the device-agnostic target. Each process then normalizes over its
    own batch."""

    code = "TP015"
    order = 180
    mentions = rb"\bconvert_sync_batchnorm\b"
    reads = (CONVERT, "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm")
    title = "SyncBatchNorm"
    readme = """`nn.SyncBatchNorm.convert_sync_batchnorm(model)`: dropped on cpu (DDP refuses SyncBatchNorm there;
    `model = model` goes, and an `if` that only chose it), converted only when an accelerator is present on
    `accelerator`"""
    sample = "import torch\n\n\ndef convert(model):\n    return torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.qualified_name(node.func) not in self.reads:
            return
        module = call_argument(node, "module", position=0)
        target = self.target
        presence = sync_batchnorm(target)
        if module is None or presence is Presence.ALWAYS:
            return
        if presence is Presence.NEVER:
            self.change(node, lambda updated: call_argument(updated, "module", position=0).value,
                        "keep BatchNorm: SyncBatchNorm needs a GPU-like device")
            return
        if self.guarded_already(node):
            return
        if not isinstance(module.value, (cst.Name, cst.Attribute)):
            self.report(node, Operation.NOTE, f"SyncBatchNorm needs an accelerator: convert only when {target.guard}")
            return  # (the guarded form would build the module twice)
        guard = target.guard

        def guarded(updated: cst.Call) -> cst.IfExp:
            return only_when(guard, updated, call_argument(updated, "module", position=0).value)

        self.change(node, guarded, f"convert to SyncBatchNorm only when {guard}", needs=guard)
