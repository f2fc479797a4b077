"""TP105: DDP left to broadcast every buffer before each forward. Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import DDP_CLASSES
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import call_argument
from torchport.migrate.rules.base.rule import Rule



class BroadcastBuffersAdvice(Rule):
    """DDP broadcasts every buffer from rank 0 before each forward unless told not to: a copy per
    step that a model without BatchNorm statistics to share does not need."""

    code = "TP105"
    order = 1050
    reads = tuple(DDP_CLASSES)
    mentions = rb"DistributedDataParallel\(|DDP\("
    title = "advice: DDP buffers"
    readme = """advice: `DistributedDataParallel(...)` without `broadcast_buffers=`: a broadcast of every buffer before
    each forward"""
    sample = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "\n"
        "def wrap(model):\n"
        "    return DDP(model)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api in DDP_CLASSES and call_argument(node, "broadcast_buffers") is None:
            self.report(node, Operation.PERFORMANCE,
                        "DDP broadcasts all buffers before every forward: pass broadcast_buffers=False "
                        "unless buffers must stay in sync (BatchNorm running stats without SyncBatchNorm)", api=api)
