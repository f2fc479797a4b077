"""TP025: `nn.DataParallel` / `nn.parallel.data_parallel` on one device, where torch's cannot run."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import DATA_PARALLEL_CLASSES, DATA_PARALLEL_FUNCTIONS
from torchport.migrate.rules.base.nodes import parse_expression
from torchport.migrate.rules.base.rule import Rule


class DataParallelOnOneDevice(Rule):
    """torch's DataParallel replicates the module and scatters the batch with CUDA's own copies:
    on torch_npu (Ascend supports DDP only) and XPU it fails, and off CUDA `data_parallel()` finds
    no device at all. The call becomes the target's (`Target.data_parallel`): a DataParallel that
    runs the module on its one device, so `model.module`, `isinstance(model, nn.DataParallel)` and
    checkpoint keys prefixed "module." stay as the script reads them. Where torch's only wraps the
    module (the CPU, mps) the class is kept. Subclasses of DataParallel are left alone."""

    code = "TP025"
    order = 250
    mentions = rb"DataParallel\(|data_parallel\("
    reads = tuple(DATA_PARALLEL_CLASSES | DATA_PARALLEL_FUNCTIONS)
    title = "DataParallel on one device"
    readme = """`nn.DataParallel(...)` / `data_parallel(...)` → a DataParallel that runs the module on its one device
    (`.module`, `module.` checkpoint keys kept) where torch's cannot run: npu, xpu; `data_parallel` everywhere"""
    sample = "import torch\n\n\ndef wrap(model):\n    return torch.nn.DataParallel(model)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        target = self.target
        if api in DATA_PARALLEL_CLASSES:
            replacement, what = target.data_parallel, "DataParallel"
        elif api in DATA_PARALLEL_FUNCTIONS:
            replacement, what = target.data_parallel_apply, "data_parallel"
        else:
            return
        if replacement is None:
            return
        func = parse_expression(f"({replacement})" if " " in replacement else replacement)
        self.change(
            node, lambda updated: updated.with_changes(func=func),
            f"{what} runs the module on one {target.name} device ({replacement}): .module and 'module.' "
            "checkpoint keys kept; DDP with one process per device (--distributed) uses N", api=api, needs=replacement,
        )
