"""TP008-TP009: environment variables and cuDNN flags."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.apis.devices import CUDA_VISIBLE_DEVICES
from torchport.migrate.rules.base.device_exprs import quoted, string_value
from torchport.migrate.rules.base.nodes import parse_expression
from torchport.migrate.rules.base.rule import Rule


class VisibleDevicesRule(Rule):
    """`CUDA_VISIBLE_DEVICES` becomes the target's own variable (`ASCEND_RT_VISIBLE_DEVICES`,
    `ZE_AFFINITY_MASK`); where the target has none it is left and noted as having no effect."""

    code = "TP008"
    order = 120
    mentions = rb"CUDA_VISIBLE_DEVICES"
    reads = ()
    title = "CUDA_VISIBLE_DEVICES"
    readme = """`CUDA_VISIBLE_DEVICES` (in code and in `.sh` launch scripts) → `ASCEND_RT_VISIBLE_DEVICES` / `ZE_AFFINITY_MASK`"""
    sample = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n'

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        if string_value(node) != CUDA_VISIBLE_DEVICES or isinstance(self.parent(node), cst.Expr):
            return
        env = self.target.visible_devices_env
        if env is None:
            self.report(node, Operation.NOTE, unused_visible_devices(self.target))
            return
        self.change(node, lambda updated: quoted(updated, env), visible_devices_twin(env))


def unused_visible_devices(target) -> str:
    return f"{CUDA_VISIBLE_DEVICES} has no effect on {target.name}; left as is"


def visible_devices_twin(env: str) -> str:
    return f"replace {CUDA_VISIBLE_DEVICES} with {env}"


class CudnnFlagRule(Rule):
    """`torch.backends.cudnn.<flag> = ...` and `torch.backends.cuda.<flag> = ...` (TF32, SDPA
    switches) have no effect off CUDA: noted, left in place (harmless); a flag with a twin on the
    target (TF32's, HF32 on npu: `Target.backend_flags`) sets the twin instead."""

    code = "TP009"
    order = 130
    mentions = rb"\bcudnn\b"
    reads = ("torch.backends.cudnn.", "torch.backends.cuda.")
    title = "cuDNN and CUDA backend flags (noted)"
    readme = """`torch.backends.cudnn.*` flags: noted as having no effect, left in place; TF32's → HF32's on npu
    (`torch.npu.matmul.allow_hf32`, `torch.npu.conv.allow_hf32`)"""
    sample = "import torch\ntorch.backends.cudnn.benchmark = True\n"

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:  # noqa: N802
        if not isinstance(node.target, cst.Attribute):
            return  # (a bare name is the script's own)
        api = self.qualified_name(node.target)
        if not (api and api.startswith(("torch.backends.cudnn.", "torch.backends.cuda."))):
            return
        twin = self.target.backend_flags.get(api)
        if twin is None:
            self.report(node, Operation.NOTE, f"{api} has no effect on {self.target.name}; left as is", api=api)
            return
        self.change(node, lambda updated: updated.with_changes(target=parse_expression(twin)),
                    f"{api} -> {twin}: the {self.target.name}'s twin of the flag", api=api, needs=twin)
