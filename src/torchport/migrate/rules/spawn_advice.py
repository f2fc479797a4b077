"""TP104: processes started from inside the script (`mp.spawn`). Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import SPAWNS
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule



class SpawnAdvice(Rule):
    """`mp.spawn` starts the processes from inside the script; device backends expect one
    process per device started by a launcher, each reading its LOCAL_RANK (Ascend's ports all
    made this change)."""

    code = "TP104"
    order = 1040
    reads = tuple(SPAWNS)
    mentions = rb"spawn\(|start_processes\("
    title = "advice: process launch"
    readme = """advice (targets with several devices): `mp.spawn` / `start_processes`: start one process per device with a launcher
    (torchrun)"""
    sample = "import torch.multiprocessing as mp\n\n\ndef train(rank):\n    pass\n\n\nmp.spawn(train, nprocs=2)\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.has_device and not target.advice.single_device  # (one device: nothing to spread over)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api in SPAWNS and self.applies_to(self.target):
            self.report(node, Operation.PERFORMANCE,
                        f"start one process per {self.target.name} device with a launcher instead "
                        "(torchrun --nproc_per_node N train.py, each process reading LOCAL_RANK)", api=api)
