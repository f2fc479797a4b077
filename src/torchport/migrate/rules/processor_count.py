"""TP033: CUDA's count of streaming multiprocessors read from a device's properties."""

from __future__ import annotations

import libcst as cst

from torchport.apis.cuda_module import PROCESSOR_COUNT, PROPERTIES
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule


class ProcessorCountRule(Rule):
    """`torch.cuda.get_device_properties(d).multi_processor_count` sizes kernel grids; other devices
    name their count of compute units otherwise (XPU: `gpu_subslice_count`; torch_npu's field of
    CUDA's name is never set, its count is `cube_core_num`): read as the target names it. On the
    properties call itself, or on a name assigned from one in the file; elsewhere (properties handed
    in from afar) a NOTE says what the target calls it."""

    code = "TP033"
    order = 128
    mentions = rb"\bmulti_processor_count\b"
    reads = (PROPERTIES,)
    title = "multiprocessor counts"
    readme = """`get_device_properties(d).multi_processor_count` → the target's count of compute units:
    `.gpu_subslice_count` on xpu, `.cube_core_num` (AI cores) on npu, `device_processor_count(...)` on accelerator"""
    sample = "import torch\nsms = torch.cuda.get_device_properties(0).multi_processor_count\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.processor_count != PROCESSOR_COUNT

    def __init__(self, context) -> None:
        super().__init__(context)
        self.properties: set[str] = set()  # the names the file assigns a properties call to

    def visit_Assign(self, node: cst.Assign) -> None:  # noqa: N802
        if self._is_properties(node.value):
            self.properties.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != PROCESSOR_COUNT:
            return
        count = self.target.processor_count
        known = self._is_properties(node.value) or (isinstance(node.value, cst.Name) and node.value.value in self.properties)
        if not known:
            self.report(node, Operation.NOTE, f"if these are a device's properties, {self.target.name} names this "
                        f"count {count.removesuffix('()')}: read it so there", api=PROCESSOR_COUNT)
            return
        if count.endswith("()"):
            function = count.removesuffix("()")
            self.change(node, lambda updated: cst.Call(func=cst.Name(function), args=[cst.Arg(bare(updated.value))]),
                        f"read {PROCESSOR_COUNT} as {function}(properties)", api=PROCESSOR_COUNT, needs=function)
            return
        self.change(node, lambda updated: updated.with_changes(attr=cst.Name(count)),
                    f"replace .{PROCESSOR_COUNT} with .{count}, the {self.target.name} count of compute units",
                    api=PROCESSOR_COUNT)

    def _is_properties(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.qualified_name(node.func) == PROPERTIES


def bare(expression: cst.BaseExpression) -> cst.BaseExpression:
    """`expression` without its own parentheses, which an argument does not need."""
    return expression.with_changes(lpar=[], rpar=[]) if expression.lpar else expression
