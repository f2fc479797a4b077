"""TP018: `torch.version.cuda`, read as a capability test."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.rule import ApiReferenceRule

CUDA_VERSION = "torch.version.cuda"


class CudaBuildVersionRule(ApiReferenceRule):
    """`torch.version.cuda` is None on every build but CUDA's, so code that tests it (`if
    torch.version.cuda and ...: use bfloat16`) silently takes its other path on the target.
    Left as it is, and noted, so that a person decides what the test stands for."""

    code = "TP018"
    order = 220
    mentions = rb"\bversion\.cuda\b"
    prefix = CUDA_VERSION
    reads = (CUDA_VERSION,)
    title = "CUDA build tests"
    readme = """`torch.version.cuda` used as a capability test: noted (it is None off CUDA builds, so the test is
    silently false)"""
    sample = 'import torch\nif torch.version.cuda:\n    print("built with CUDA")\n'

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if api == CUDA_VERSION:
            self.report(node, Operation.NOTE,
                        f"{CUDA_VERSION} is None off CUDA builds: a test on it is false on {self.target.name}", api=api)
