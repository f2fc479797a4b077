"""TP005: `torch.cuda.amp` and float16 autocast."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.findings import Operation
from torchport.migrate.rules.base import ApiReferenceRule, call_argument, parse_expression, with_arguments
from torchport.migrate.rules.device_exprs import cuda_literal_index, device_expression

CUDA_AMP = "torch.cuda.amp."
DEVICE_FIRST = {"autocast", "GradScaler"}  # take the device type as their first argument
DEVICE_KEYWORD = {"custom_fwd", "custom_bwd"}  # take it as `device_type=`
AUTOCASTS = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"}


class AmpRule(ApiReferenceRule):
    """Move `torch.cuda.amp.autocast/GradScaler/custom_fwd/custom_bwd` to `torch.amp` with the
    target's device type, and, where float16 autocast is not sensible (the CPU), use the target's
    replacement dtype in any autocast on a CUDA device. Both are reported.
    """

    code = "TP005"
    prefix = CUDA_AMP
    reads = (CUDA_AMP, *AUTOCASTS, "torch.float16", "torch.half")
    title = "automatic mixed precision"

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        name = api[len(CUDA_AMP) :]
        verdict = self.target.verdict(api)
        if verdict.replacement is None:
            self.report(node, Operation.UNSUPPORTED, verdict.note, api=api)
            return
        device = device_expression(self.target, None)
        replacement = verdict.replacement
        parent = self.parent(node)
        is_call = isinstance(parent, cst.Call) and parent.func is node
        if name in DEVICE_FIRST and is_call:

            def fix(updated: cst.Call) -> cst.Call:
                moved = updated.with_changes(func=parse_expression(replacement))
                return with_arguments(moved, before=[cst.Arg(parse_expression(device))])

            self.change(parent, fix, verdict.describe(), api=api, needs=f"{replacement} {device}")
            if name == "autocast":
                self._float16(parent)
        elif name in DEVICE_KEYWORD:
            keyword = cst.Arg(
                parse_expression(device),
                keyword=cst.Name("device_type"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            if is_call:

                def fix(updated: cst.Call) -> cst.Call:
                    return with_arguments(updated.with_changes(func=parse_expression(replacement)), after=[keyword])

                self.change(parent, fix, verdict.describe(), api=api, needs=f"{replacement} {device}")
            else:  # a bare decorator: `@torch.cuda.amp.custom_fwd`
                new = cst.Call(func=parse_expression(replacement), args=[keyword])
                self.change(node, lambda _: new, verdict.describe(), api=api, needs=f"{replacement} {device}")
        else:
            self.change(node, lambda _: parse_expression(replacement), verdict.describe(), api=api, needs=replacement)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.qualified_name(node.func) not in AUTOCASTS:
            return
        device = call_argument(node, "device_type", position=0)
        if device is not None and cuda_literal_index(device.value)[0]:
            self._float16(node)

    def _float16(self, call: cst.Call) -> None:
        replacement = self.target.float16_autocast
        dtype = call_argument(call, "dtype", position=None)
        if replacement is None or dtype is None or self.qualified_name(dtype.value) not in ("torch.float16", "torch.half"):
            return
        self.change(
            dtype.value,
            lambda _: parse_expression(replacement),
            f"autocast float16 -> {replacement} on {self.target.name}",
            needs=replacement,
        )
