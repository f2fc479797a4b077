"""TP036: another library's API that is built for CUDA and not for the target."""

from __future__ import annotations

import libcst as cst

from torchport.apis.frameworks import DEEPSPEED_CONFIG_KEYS
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule
from torchport.string_literals import string_value


class MissingBuildRule(Rule):
    """A call of a library API the target has no build of (`Target.missing_builds`: DeepSpeed's
    FusedLamb on the NPU, its fused GPU optimizers on the CPU, bitsandbytes' quantization on the
    NPU) fails there at the call or deep in the library: a row names it and what to use instead.
    A feature switched on by a DeepSpeed config key written in the script (`"zero_quantized_weights":
    True`, ZeRO++ on the NPU) gets the same row.
    Nothing is rewritten: the replacements take other arguments, or change what is trained."""

    code = "TP036"
    order = 1005
    mentions = rb"\bFused(Lamb|Lion|Adam)\b|\bBitsAndBytesConfig\b|zero_quantized_"
    reads = ()
    title = "libraries without a build for the target"
    readme = """another library's CUDA-only API the target has no build of (DeepSpeed's `FusedLamb`/`FusedLion` on npu, its fused
    GPU optimizers on cpu, `BitsAndBytesConfig` and ZeRO++'s quantized weights on npu): an UNSUPPORTED row with what to
    use instead"""
    sample = "from deepspeed.ops.lamb import FusedLamb\noptimizer = FusedLamb(model.parameters())\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return bool(target.missing_builds)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.imported_name(node.func)
        why = self.target.missing_builds.get(api) if api else None
        if why is not None:
            self.report(node, Operation.UNSUPPORTED, f"{api} is not built for {self.target.name}: {why}", api=api)

    def visit_DictElement(self, node: cst.DictElement) -> None:  # noqa: N802
        feature = DEEPSPEED_CONFIG_KEYS.get(string_value(node.key) or "")
        why = self.target.missing_builds.get(feature) if feature else None
        if why is not None and string_value(node.value) is None and not _is_false(node.value):
            self.report(node, Operation.UNSUPPORTED, f"{feature} is not built for {self.target.name}: {why}", api=feature)


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("False", "None")
