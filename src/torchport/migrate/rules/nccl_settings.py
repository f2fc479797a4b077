"""TP031: NCCL's settings in the environment (`NCCL_DEBUG`, `TORCH_NCCL_ASYNC_ERROR_HANDLING`...)."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import NCCL_SETTING
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import quoted, string_value
from torchport.migrate.rules.base.rule import Rule


class NcclSettingsRule(Rule):
    """A setting of NCCL named as a whole string (`os.environ["NCCL_SOCKET_IFNAME"] = ...`,
    `os.environ.get("NCCL_DEBUG")`) becomes its twin where the target's collective library has one
    (HCCL's on npu); one without a twin is left and noted: nothing reads it there."""

    code = "TP031"
    order = 125
    mentions = rb"NCCL_"
    reads = ()
    title = "NCCL settings"
    readme = """NCCL's environment settings → their HCCL twins on npu (`TORCH_NCCL_ASYNC_ERROR_HANDLING` →
    `HCCL_ASYNC_ERROR_HANDLING`...); the others noted as having no effect"""
    sample = 'import os\nos.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"\n'

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.collective_settings is not None

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        value = string_value(node)
        if value is None or not NCCL_SETTING.fullmatch(value) or isinstance(self.parent(node), cst.Expr):
            return
        twin = self.target.collective_settings.get(value)
        if twin is None:
            self.report(node, Operation.NOTE, unused_setting(value, self.target), api=value)
            return
        self.change(node, lambda updated: quoted(updated, twin), twin_setting(value, twin))


def unused_setting(name: str, target) -> str:
    return f"{name} configures NCCL, which {target.name} does not use: nothing reads it there; left as is"


def twin_setting(name: str, twin: str) -> str:
    return f"replace NCCL's {name} with its twin {twin}"
