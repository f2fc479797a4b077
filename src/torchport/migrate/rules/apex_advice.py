"""TP117: apex kept on a target with an apex build of its own (Ascend's, `migrate --apex keep`, the
npu default): what that build does faster. Advice changes nothing: each row names its line."""

from __future__ import annotations

import libcst as cst

from torchport.apis.apex import APEX, INITIALIZE, NPU_FUSED, OPTIMIZERS
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule

COMBINE_GRAD = "combine_grad"
OPTIMIZER_PACKAGE = f"{APEX}.optimizers."


def ascend_optimizer(native: str) -> str | None:
    """`apex.optimizers.NpuFused<X>` for an optimizer whose native class ends in Fused<X> or is
    torch's <X>, where Ascend's apex has one."""
    name = native.rsplit(".", 1)[-1]
    fused = name if name.startswith("Fused") else f"Fused{name}"
    return f"{OPTIMIZER_PACKAGE}Npu{fused}" if f"Npu{fused}" in NPU_FUSED else None


def keeps_apex(rule: Rule) -> bool:
    """Whether the file rule walks keeps its apex, on a target with an apex of its own."""
    imports = rule.context.imports
    imported = imports is not None and any(v == APEX or v.startswith(f"{APEX}.") for v in imports.bindings.values())
    return rule.target.keeps_apex and rule.context.keep_apex and imported


class ApexAdvice(Rule):
    """Where apex is kept for Ascend's build: `amp.initialize` without `combine_grad=True` unscales
    each gradient on its own (the guide's MobileNetV1 tuning case turns it on: one fused gradient
    buffer), and apex's CUDA fused optimizers have NPU twins there (`apex.optimizers.NpuFused*`,
    which the same case swaps in). torch's optimizers get that twin in TP110's row."""

    code = "TP117"
    order = 1180
    reads = (APEX,)
    mentions = rb"\bapex\b"
    title = "advice: Ascend's apex"
    readme = """advice (npu, apex kept): `amp.initialize` without `combine_grad=True`; `apex.optimizers.Fused*` →
    Ascend apex's `apex.optimizers.NpuFused*`"""
    sample = ("from apex import amp\n\n\ndef setup(model, optimizer):\n"
              "    return amp.initialize(model, optimizer, opt_level=\"O2\")\n")

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.keeps_apex

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if not self.context.keep_apex:
            return
        name = self._apex_name(node.func)
        if name == INITIALIZE:
            self._initialize(node)
        elif name in OPTIMIZERS and not name.rsplit(".", 1)[-1].startswith("Npu"):
            self._optimizer(node, name)

    def _initialize(self, node: cst.Call) -> None:
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        if COMBINE_GRAD in keywords or any(arg.star == "**" for arg in node.args):  # (set, or maybe set)
            return
        self.report(node, Operation.PERFORMANCE,
                    f"pass combine_grad=True: Ascend's apex then unscales the gradients in one fused buffer on "
                    f"{self.target.name} (with an apex.optimizers.NpuFused* optimizer, one fused update too)",
                    api=INITIALIZE)

    def _optimizer(self, node: cst.Call, name: str) -> None:
        replacement = OPTIMIZERS[name]
        native = replacement.native
        if replacement.chooses is not None:
            parameter, _, when_false = replacement.chooses
            given = next((arg.value for arg in node.args if arg.keyword and arg.keyword.value == parameter), None)
            if isinstance(given, cst.Name) and given.value == "False":
                native = when_false
        twin = ascend_optimizer(native)
        if twin is not None:
            self.report(node, Operation.PERFORMANCE,
                        f"use {twin}: {name} runs CUDA kernels; Ascend's apex fuses the same update on "
                        f"{self.target.name} (with combine_grad=True in amp.initialize)", api=name)

    def _apex_name(self, func: cst.BaseExpression) -> str | None:
        name = self.imported_name(func)
        if name is None or not (name == APEX or name.startswith(f"{APEX}.")):
            return None
        if name.startswith(OPTIMIZER_PACKAGE):  # (`apex.optimizers.fused_adam.FusedAdam`)
            return OPTIMIZER_PACKAGE + name.rsplit(".", 1)[-1]
        return name
