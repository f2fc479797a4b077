"""TP103: `nn.DataParallel`, which splits nothing off CUDA. Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import DATA_PARALLEL_CLASSES, DATA_PARALLEL_FUNCTIONS
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule

DATA_PARALLEL = DATA_PARALLEL_CLASSES | DATA_PARALLEL_FUNCTIONS


class DataParallelAdvice(Rule):
    """`nn.DataParallel` is a single-process, CUDA-era wrapper: other backends do not split the
    batch with it (and on the CPU it only prefixes checkpoint keys with `module.`)."""

    code = "TP103"
    order = 1030
    reads = tuple(DATA_PARALLEL)
    mentions = rb"DataParallel\(|data_parallel\("
    title = "advice: DataParallel"
    readme = """advice: `nn.DataParallel` / `data_parallel` splits nothing off CUDA: DDP with one process per device (on a one-device target: drop it)"""
    sample = "import torch\n\n\ndef wrap(model):\n    return torch.nn.DataParallel(model)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api not in DATA_PARALLEL:
            return
        if self.target.advice.single_device:
            message = (f"{self.target.name} has one device: DataParallel splits nothing there and prefixes checkpoint "
                       "keys with 'module.': drop it")
        elif self.target.advice.has_device:
            message = (f"DataParallel does not split work across {self.target.name} devices: use "
                       "DistributedDataParallel with one process per device (torchrun; "
                       "torchport migrate --distributed writes it)")
        else:
            message = ("on the CPU DataParallel splits nothing and prefixes checkpoint keys with 'module.': drop it "
                       "(N processes: DistributedDataParallel, torchport migrate --distributed)")
        self.report(node, Operation.PERFORMANCE, message, api=api)
