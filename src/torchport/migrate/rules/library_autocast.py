"""TP028: other libraries' autocast helpers whose device type defaults to CUDA."""

from __future__ import annotations

import re

import libcst as cst

from torchport.apis.amp import LIBRARY_AUTOCASTS
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import device_expression
from torchport.migrate.rules.base.nodes import call_argument, source_of, with_argument_and_also, with_keyword
from torchport.migrate.rules.base.rule import Rule

_CUDA_ALONE = "autocasts on CUDA alone unless given {keyword}="


class LibraryAutocastRule(Rule):
    """`autocast(amp)` of a library that defaults its device type to "cuda" (ultralytics'
    `autocast(enabled, device="cuda")`, apis/amp.py's LIBRARY_AUTOCASTS) autocasts nothing on
    another device. A call without the device keyword gets the target's device type
    (`autocast(amp, device="npu")`; on `accelerator` `device=DEVICE_TYPE`, on only where
    autocast is worth it, as torch's own autocast). On the CPU it is left as it is, with a NOTE:
    float32, as the script runs on a CPU host. A re-export that this file never calls
    (YOLOv5's `from ultralytics.utils.torch_utils import autocast as smart_amp_autocast`) gets a
    PRECISION row: its callers in other files need the keyword by hand."""

    code = "TP028"
    order = 95
    mentions = rb"\bautocast\b"
    title = "other libraries' CUDA-only autocast"
    readme = """another library's autocast whose device type defaults to "cuda" (ultralytics' `autocast(enabled,
    device="cuda")`, YOLOv5's `smart_amp_autocast`): `autocast(amp)` → `autocast(amp, device="npu")`
    (`device=DEVICE_TYPE` on `accelerator`, gated as torch's autocast), a NOTE on cpu; a re-export this file never
    calls gets a PRECISION row (its callers elsewhere need `device=` by hand)"""
    sample = "from ultralytics.utils.torch_utils import autocast\nwith autocast(True):\n    pass\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        keyword = self._library_autocast(node.func)
        if keyword is None or any(arg.star for arg in node.args) or call_argument(node, keyword, position=1):
            return  # (a device given: the device-string rules read it)
        api = self.imported_name(node.func)
        if not self.target.has_device:
            self.report(node, Operation.NOTE, f"{api} {_CUDA_ALONE.format(keyword=keyword)}: float32 here, as the "
                        "script runs on a CPU host (kept)", api=api)
            return
        device = device_expression(self.target, None)
        gate = self.target.autocast_enabled
        enabled = call_argument(node, "enabled", position=0)
        gated = gate is not None and enabled is not None and not self._is_dtype(enabled.value)

        def fix(updated: cst.Call) -> cst.Call:
            if gated:
                updated = with_argument_and_also(updated, call_argument(updated, "enabled", position=0), gate)
            return with_keyword(updated, keyword, device)

        message = (f"{keyword}={device}: {api} {_CUDA_ALONE.format(keyword=keyword)} "
                   f"(without it: float32 on {self.target.name}, without a word)")
        self.change(node, fix, message, api=api, needs=f"{device} {gate if gated else ''}")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:  # noqa: N802
        if node.module is None or node.relative or isinstance(node.names, cst.ImportStar):
            return
        module = source_of(node.module)
        for alias in node.names:
            api = f"{module}.{alias.evaluated_name}"
            if api not in LIBRARY_AUTOCASTS or not self.target.has_device:
                continue
            bound = alias.evaluated_alias or alias.evaluated_name
            if re.search(rb"\b%s\s*\(" % re.escape(bound.encode()), self.context.whole_source):
                continue  # (called here: visit_Call gives each call its device)
            keyword = LIBRARY_AUTOCASTS[api]
            device = device_expression(self.target, None)
            self.report(node, Operation.PRECISION, f"{bound} is {api}, which {_CUDA_ALONE.format(keyword=keyword)}: "
                        f"its calls in other files run float32 on {self.target.name}; give them {keyword}={device}", api=api)

    def _library_autocast(self, func: cst.BaseExpression) -> str | None:
        api = self.imported_name(func)
        return LIBRARY_AUTOCASTS.get(api) if api else None

    def _is_dtype(self, value: cst.BaseExpression) -> bool:
        """`torch.bfloat16` given as `enabled` (ultralytics reads a dtype there): not ANDed with a flag."""
        name = self.qualified_name(value)
        return name is not None and name.startswith("torch.")
