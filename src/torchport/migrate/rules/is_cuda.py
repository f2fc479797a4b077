"""TP012: `tensor.is_cuda`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base import Rule, parse_expression


class IsCudaRule(Rule):
    """`x.is_cuda` asks "is this on the accelerator?": on a fixed target that is `x.is_npu`,
    `x.is_xpu`, `x.is_mps` or `x.is_cpu`; on the device-agnostic target it is
    `x.device.type == DEVICE_TYPE`."""

    code = "TP012"
    title = "is_cuda checks"

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != "is_cuda" or self.qualified_name(node) is not None:
            return
        target = self.target
        if target.device_type is not None:
            attribute = f"is_{target.device_type}"
            self.change(
                node,
                lambda updated: updated.with_changes(attr=cst.Name(attribute)),
                f"replace .is_cuda with .{attribute}",
            )
            return
        comparison = f"(x.device.type == {target.device_type_expr})"

        def fix(updated: cst.Attribute) -> cst.BaseExpression:
            expression = parse_expression(comparison)
            device = cst.Attribute(value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type"))
            return expression.with_changes(left=device)

        self.change(node, fix, f"replace .is_cuda with .device.type == {target.device_type_expr}", needs=target.device_type_expr)
