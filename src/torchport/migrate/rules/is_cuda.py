"""TP012: `tensor.is_cuda`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.nodes import parse_expression
from torchport.migrate.rules.base.rule import Rule


class IsCudaRule(Rule):
    """`x.is_cuda` asks "is this on the accelerator?" and keeps its answer (as TP013 does for
    comparisons with `"cuda"`): `x.is_npu`, `x.is_xpu` or `x.is_mps` on a device target; left as
    it is on the CPU target, where it is false, as it should be; on the device-agnostic target
    `x.device.type == DEVICE_TYPE != "cpu"`."""

    code = "TP012"
    order = 160
    mentions = rb"\bis_cuda\b"
    title = "is_cuda checks"
    readme = """`x.is_cuda` → `x.is_npu` / `x.is_xpu` / `x.is_mps`; left as is on cpu (false there, as it should be);
    `x.device.type == DEVICE_TYPE != "cpu"` on accelerator"""
    sample = "import torch\n\n\ndef on_gpu(x):\n    return x.is_cuda\n"

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != "is_cuda" or self.qualified_name(node) is not None:
            return
        target = self.target
        if not target.has_device or self.is_bound_here(node):
            return
        if target.device_type is not None:
            attribute = f"is_{target.device_type}"
            self.change(
                node,
                lambda updated: updated.with_changes(attr=cst.Name(attribute)),
                f"replace .is_cuda with .{attribute}",
            )
            return
        comparison = f'x.device.type == {target.device_type_expr} != "cpu"'
        parenthesized = isinstance(self.parent(node), (cst.Attribute, cst.Comparison, cst.ComparisonTarget,
                                                       cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))

        def fix(updated: cst.Attribute) -> cst.BaseExpression:
            expression = parse_expression(comparison)
            device = cst.Attribute(value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type"))
            expression = expression.with_changes(left=device)
            if parenthesized:
                expression = expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return expression

        self.change(node, fix, f"replace .is_cuda with {comparison.replace('x.', '.', 1)}", needs=target.device_type_expr)
