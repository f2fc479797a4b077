"""TP003: `x.cuda()` on tensors and modules."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base import Rule, call_argument, parse_expression, source_of, with_arguments
from torchport.migrate.rules.device_exprs import device_expression, indexed_device_expression


class CudaMethodRule(Rule):
    """Rewrite `x.cuda()`, `x.cuda(i)`, `x.cuda(non_blocking=True)` to the target's idiom.

    With a device method (`.npu()`, `.xpu()`) the call is renamed and keeps its arguments;
    `.cpu()` takes none. Elsewhere it becomes `x.to(<device>)`, keeping `non_blocking`.
    """

    code = "TP003"
    mentions = rb"\.cuda\b"
    reads = ("torch.cuda",)
    title = ".cuda() calls"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return
        if self.qualified_name(func) == "torch.cuda":  # the module itself, not a method
            return
        method = self.target.tensor_method
        if method == "cpu":
            self.change(node, _renamed("cpu", keep_args=False), "replace .cuda() with .cpu()")
        elif method is not None:
            self.change(node, _renamed(method, keep_args=True), f"replace .cuda() with .{method}(...)")
        else:
            index = call_argument(node, "device", position=0)
            device = (
                device_expression(self.target, None)
                if index is None
                else indexed_device_expression(self.target, source_of(index.value))
            )
            needs = indexed_device_expression(self.target, "0")  # (not the script's own names)
            self.change(node, _moved_to(device), f"replace .cuda() with .to({device})", needs=needs)


def _renamed(method: str, *, keep_args: bool):
    def fix(updated: cst.Call) -> cst.Call:
        renamed = updated.with_changes(func=updated.func.with_changes(attr=cst.Name(method)))
        return renamed if keep_args else renamed.with_changes(args=[])

    return fix


def _moved_to(device: str):
    """`x.cuda(i, non_blocking=True)` -> `x.to(<device>, non_blocking=True)`."""

    def fix(updated: cst.Call) -> cst.Call:
        keywords = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        to = updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to")), args=keywords)
        return with_arguments(to, before=[cst.Arg(parse_expression(device))])

    return fix
