"""TP003: `x.cuda()` on tensors and modules."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base import Rule, call_argument, parse_expression, source_of
from torchport.migrate.rules.device_exprs import device_expression, indexed_device_expression


class CudaMethodRule(Rule):
    """Rewrite `x.cuda()`, `x.cuda(i)`, `x.cuda(non_blocking=True)` to the target's idiom.

    With a device method (`.npu()`, `.xpu()`) the call is renamed and keeps its arguments;
    `.cpu()` takes none. Elsewhere it becomes `x.to(<device>)`, keeping `non_blocking`.
    """

    code = "TP003"
    title = ".cuda() calls"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return
        if self.qualified_name(func) == "torch.cuda":  # the module itself, not a method
            return
        index = call_argument(node, "device", position=0)
        target = self.target
        method = target.tensor_method
        if method is not None and method != "cpu":
            new_source = f".{method}(...)"
            fix = lambda updated: updated.with_changes(func=updated.func.with_changes(attr=cst.Name(method)))
        elif method == "cpu":
            new_source = ".cpu()"
            fix = lambda updated: updated.with_changes(func=updated.func.with_changes(attr=cst.Name("cpu")), args=[])
        else:
            if index is None:
                device = device_expression(target, None)
            else:
                device = indexed_device_expression(target, source_of(index.value))
            new_source = f".to({device})"

            def fix(updated: cst.Call) -> cst.Call:
                kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
                device_arg = cst.Arg(parse_expression(device))
                args = [device_arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))] if kept else [device_arg]
                return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to")), args=args + kept)

            self.change(node, fix, f"replace .cuda() with {new_source}", needs=device)
            return
        self.change(node, fix, f"replace .cuda() with {new_source}")
