"""TP005: `torch.cuda.amp` and float16 autocast."""

from __future__ import annotations

import libcst as cst

from torchport.apis.amp import AMP_PREFIX, AUTOCAST, AUTOCASTS, CUDA_AMP, DEVICE_FIRST, DEVICE_KEYWORD
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import cuda_literal_index, device_expression, string_value
from torchport.migrate.rules.base.nodes import (
    call_argument,
    keyword_argument,
    parse_expression,
    source_of,
    with_argument_and_also,
    with_arguments,
    with_keyword,
)
from torchport.migrate.rules.base.rule import ApiReferenceRule
from torchport.targets.surface import TORCH_SURFACE, load

GATE_WHY = "off on a CPU without native bfloat16, where it runs slower than float32"


def cuda_amp_parameters(name: str) -> list[str]:
    """The parameters of `torch.cuda.amp.<name>`, in order (from the generated surface)."""
    return load(TORCH_SURFACE)["modules"][CUDA_AMP].get(name, {}).get("params", [])


def by_keyword(call: cst.Call, parameters: list[str]) -> cst.Call:
    """`call` with its positional arguments passed by the names they bind to in `parameters`
    (`autocast(flag)` -> `autocast(enabled=flag)`), so that they survive a change of signature."""
    if not any(arg.keyword is None and not arg.star for arg in call.args):
        return call
    args, position = [], 0
    for arg in call.args:
        if arg.keyword is None and not arg.star and position < len(parameters):
            named = keyword_argument(parameters[position], arg.value)
            arg = arg.with_changes(keyword=named.keyword, equal=named.equal)
            position += 1
        args.append(arg)
    return call.with_changes(args=args)


class AmpRule(ApiReferenceRule):
    """Move `torch.cuda.amp.autocast/GradScaler/custom_fwd/custom_bwd` to the target's AMP: its
    own `<device>.amp` where it has one (same signature), else `torch.amp` with the target's device
    type. Arguments move by name, not by position (`autocast(flag)`: `flag` is `enabled`); a
    reference that is stored or passed on (`amp_autocast = torch.cuda.amp.autocast`,
    `getattr(torch.cuda.amp, "autocast")`) becomes one with the device bound
    (`functools.partial(torch.amp.autocast, "cpu")`). Where float16 autocast is not sensible (the
    CPU), autocast on a CUDA device uses the target's replacement dtype. All are reported.
    """

    code = "TP005"
    order = 90
    mentions = rb"\bcuda\b"
    prefix = CUDA_AMP
    reads = (prefix, *AUTOCASTS, "torch.float16", "torch.half")
    title = "automatic mixed precision"
    readme = """`torch.cuda.amp.*` → `torch.npu.amp.*` on npu (torch_npu's own GradScaler), else `torch.amp` with the
    device type; positional arguments passed by name (`autocast(flag)` → `autocast("cpu", enabled=flag)`);
    stored and `getattr` references → `functools.partial(torch.amp.autocast, <device>)`; float16 autocast →
    bfloat16 on the CPU, on only where the CPU computes bfloat16 natively (`enabled=... and CPU_BF16`, read
    from `torch.cpu.get_capabilities()` at run time); on `accelerator` likewise where it falls back to the
    CPU (`enabled=... and AUTOCAST_OK`, `AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16`); `torchport run`
    decides the same"""
    sample = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if api == self.prefix and self._is_getattr_owner(node):
            return  # `getattr(torch.cuda.amp, "autocast")`: visit_Call reads it as torch.cuda.amp.autocast
        name = api[len(AMP_PREFIX) :]
        verdict = self.target.verdict(api)
        if verdict.replacement is None:
            self.report(node, Operation.UNSUPPORTED, verdict.note, api=api)
            return
        replacement = verdict.replacement
        if not replacement.startswith("torch.amp."):  # the target's own AMP: a rename
            self.change(node, lambda _: parse_expression(replacement), verdict.describe(), api=api, needs=replacement)
            return
        device = device_expression(self.target, None)
        parent = self.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            self._move_call(parent, name, replacement, device, verdict.describe(), api)
        elif name in DEVICE_KEYWORD and isinstance(parent, cst.Decorator):  # `@torch.cuda.amp.custom_fwd`
            new = cst.Call(func=parse_expression(replacement), args=[_device_keyword(device)])
            self.change(node, lambda _: new, verdict.describe(), api=api, needs=f"{replacement} {device}")
        elif not self._is_presence_test(node):
            self._bind_device(node, name, replacement, device, verdict.describe(), api)

    def _move_call(self, call: cst.Call, name: str, replacement: str, device: str, message: str, api: str) -> None:
        parameters = cuda_amp_parameters(name)

        gate = self.target.autocast_enabled if name == AUTOCAST else None

        def fix(updated: cst.Call) -> cst.Call:
            moved = by_keyword(updated, parameters).with_changes(func=parse_expression(replacement))
            if gate:
                moved = gated(moved, gate)
            if name in DEVICE_FIRST:
                return with_arguments(moved, before=[cst.Arg(parse_expression(device))])
            return with_arguments(moved, after=[_device_keyword(device)])

        if gate:
            message += f"; on only where {gate} ({GATE_WHY})"
        self.change(call, fix, message, api=api, needs=f"{replacement} {device} {gate or ''}")
        if name == AUTOCAST:
            self._float16(call)

    def _bind_device(self, node: cst.CSTNode, name: str, replacement: str, device: str, message: str, api: str) -> None:
        """A reference kept for later calls: the same callable with the device bound."""
        gate = self.target.autocast_enabled if name == AUTOCAST else None
        if name in DEVICE_FIRST:
            bound = f"functools.partial({replacement}, {device}{f', enabled={gate}' if gate else ''})"
        else:
            bound = f"functools.partial({replacement}, device_type={device})"
        self.change(node, lambda _: parse_expression(bound), f"{message}; bound with functools.partial",
                    api=api, needs=bound)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = self.qualified_name(node.func)
        if func in AUTOCASTS:
            device = call_argument(node, "device_type", position=0)
            if device is not None and cuda_literal_index(device.value)[0]:
                self._float16(node)
                self._gate(node)
        elif (name := _getattr_name(node)) is not None and self.qualified_name(node.args[0].value) == self.prefix:
            self.visit_api(node, AMP_PREFIX + name)

    def _is_presence_test(self, node: cst.BaseExpression) -> bool:
        """`GradScaler is not None`: whether an import worked, not a use of the class."""
        parent = self.parent(node)
        if isinstance(parent, cst.ComparisonTarget):
            parent = self.parent(parent)
        return isinstance(parent, cst.Comparison) and all(
            isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons
        )

    def _is_getattr_owner(self, node: cst.BaseExpression) -> bool:
        argument = self.parent(node)
        call = self.parent(argument) if isinstance(argument, cst.Arg) else None
        return isinstance(call, cst.Call) and call.args[0] is argument and _getattr_name(call) is not None

    def _gate(self, call: cst.Call) -> None:
        """`torch.autocast("cuda", ...)` on a target whose autocast may be slower than float32."""
        gate = self.target.autocast_enabled
        if gate:
            self.change(call, lambda updated: gated(updated, gate),
                        f"autocast on only where {gate} ({GATE_WHY})", needs=gate)

    def _float16(self, call: cst.Call) -> None:
        """(`dtype` is the second positional argument of torch.cuda.amp.autocast and torch.autocast alike.)"""
        replacement = self.target.float16_autocast
        dtype = call_argument(call, "dtype", position=1)
        if replacement is None or dtype is None or self.qualified_name(dtype.value) not in ("torch.float16", "torch.half"):
            return
        self.change(
            dtype.value,
            lambda _: parse_expression(replacement),
            f"autocast float16 -> {replacement} on {self.target.name}",
            needs=replacement,
        )


def gated(call: cst.Call, gate: str) -> cst.Call:
    """`autocast(..., enabled=flag)` -> `enabled=flag and GATE`; `enabled=GATE` where none was given."""
    enabled = call_argument(call, "enabled")
    if enabled is None:
        return with_keyword(call, "enabled", gate)
    value = enabled.value
    if source_of(value) == gate or source_of(value).endswith(f" and {gate}"):
        return call  # migrated already
    return with_argument_and_also(call, enabled, gate)


def _getattr_name(call: cst.Call) -> str | None:
    """"autocast" in `getattr(x, "autocast")`."""
    if isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) == 2:
        return string_value(call.args[1].value)
    return None


def _device_keyword(device: str) -> cst.Arg:
    return keyword_argument("device_type", parse_expression(device))
