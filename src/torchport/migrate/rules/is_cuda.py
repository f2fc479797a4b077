"""TP012: `tensor.is_cuda`."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.nodes import parse_expression
from torchport.migrate.rules.base.rule import Rule
from torchport.targets.devices import HOST_DEVICE_TYPE


class IsCudaRule(Rule):
    """`x.is_cuda` asks "is this on the accelerator?" and keeps its answer (as TP013 does for
    comparisons with `"cuda"`): `x.is_npu`, `x.is_xpu` or `x.is_mps` on a device target; left as
    it is on the CPU target, where it is false, as it should be; on the device-agnostic target
    `x.device.type == DEVICE_TYPE != "cpu"`. In an `assert`, which states that the tensor is where
    the code computes (flash-attn's `assert input.is_cuda` before its kernel), that is the target's
    device, the CPU included: `x.is_cpu` on cpu, `x.device.type == DEVICE_TYPE` on accelerator."""

    code = "TP012"
    order = 160
    mentions = rb"\bis_cuda\b"
    title = "is_cuda checks"
    readme = """`x.is_cuda` → `x.is_npu` / `x.is_xpu` / `x.is_mps`; left as is on cpu (false there, as it should be);
    `x.device.type == DEVICE_TYPE != "cpu"` on accelerator; asserted (`assert x.is_cuda`): `x.is_cpu` on cpu,
    `x.device.type == DEVICE_TYPE` on accelerator"""
    sample = "import torch\n\n\ndef on_gpu(x):\n    return x.is_cuda\n"

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != "is_cuda" or self.qualified_name(node) is not None:
            return
        target = self.target
        if self.is_bound_here(node):
            return
        if self._in_assert_test(node) and (not target.has_device or target.device_chosen_at_run_time):
            self._assert_on_the_targets_device(node)
            return
        if not target.has_device:
            return
        if not target.device_chosen_at_run_time:
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

    def _in_assert_test(self, node: cst.CSTNode) -> bool:
        """Whether `node` is asserted true: in an `assert`'s test, under no `not` and no comparison
        (`assert not x.is_cuda` says the tensor is on the host: its answer stays)."""
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, cst.Assert):
                return child is parent.test
            if isinstance(parent, (cst.BaseStatement, cst.Lambda, cst.FunctionDef, cst.Comparison)) or (
                    isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)):
                return False
            child, parent = parent, self.parent(parent)
        return False

    def _assert_on_the_targets_device(self, node: cst.Attribute) -> None:
        target = self.target
        if not target.has_device:
            attribute = f"is_{HOST_DEVICE_TYPE}"
            self.change(node, lambda updated: updated.with_changes(attr=cst.Name(attribute)),
                        f"asserted: the tensor is on the target's device, the CPU: .{attribute}")
            return
        wrapped = isinstance(self.parent(node), (cst.Attribute, cst.Comparison, cst.ComparisonTarget,
                                                 cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))

        def fix(updated: cst.Attribute) -> cst.BaseExpression:
            device = cst.Attribute(value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type"))
            expression = cst.Comparison(left=device, comparisons=[cst.ComparisonTarget(
                cst.Equal(), parse_expression(target.device_type_expr))])
            return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if wrapped else expression

        self.change(node, fix, f"asserted: the tensor is on the target's device: .device.type == {target.device_type_expr}",
                    needs=target.device_type_expr)
