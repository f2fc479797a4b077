"""TP017: `ProfilerActivity.CUDA` in the profiler's activities."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base import Rule, parse_expression

ACTIVITY = "torch.profiler.ProfilerActivity"
ACTIVITY_NAMES = (ACTIVITY, "torch.autograd.ProfilerActivity", "torch._C._profiler.ProfilerActivity")
# The activity of each device target that torch's profiler records itself.
DEVICE_ACTIVITIES = {"xpu": "XPU"}


class ProfilerActivityRule(Rule):
    """`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` asks the profiler for device
    work: the target's own activity where torch's profiler has one (XPU); on the CPU and MPS the
    CUDA activity goes (the profiler records nothing for it); on the device-agnostic target a list of CPU and
    CUDA becomes `torch.profiler.supported_activities()`. On npu torch_npu.profiler records NPU
    work: reported, since its API differs."""

    code = "TP017"
    mentions = rb"ProfilerActivity"
    reads = ACTIVITY_NAMES
    title = "profiler activities"

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != "CUDA" or self._activity(node) is None:
            return
        element = self.parent(node)
        container = self.parent(element)
        if not (isinstance(element, cst.Element) and isinstance(container, (cst.List, cst.Tuple, cst.Set))):
            return
        target = self.target
        if target.device_type in DEVICE_ACTIVITIES:
            activity = DEVICE_ACTIVITIES[target.device_type]
            self.change(node, lambda updated: updated.with_changes(attr=cst.Name(activity)),
                        f"record {activity} work instead of CUDA work")
        elif target.device_type in ("cpu", "mps"):
            self._drop(container, element)
        elif target.device_type is None and self._cpu_and_cuda(container):
            new = "torch.profiler.supported_activities()"
            self.change(container, lambda _: parse_expression(new), f"profile {new}: the CPU and the device there is",
                        needs=new)
        else:
            self.report(node, Operation.NOTE, f"records no {target.name} work: {target.name}'s own profiler does",
                        api=f"{ACTIVITY}.CUDA")

    def _activity(self, node: cst.Attribute) -> str | None:
        name = self.qualified_name(node)
        return name if name is not None and name.rsplit(".", 1)[0] in ACTIVITY_NAMES else None

    def _cpu_and_cuda(self, container: cst.BaseExpression) -> bool:
        names = {self._activity(e.value) for e in container.elements if isinstance(e.value, cst.Attribute)}
        return len(container.elements) == 2 and {n.rsplit(".", 1)[1] for n in names if n} == {"CPU", "CUDA"}

    def _drop(self, container, element) -> None:
        if len(container.elements) < 2:
            return  # (nothing would be left to profile)
        position = container.elements.index(element)

        def fix(updated):
            elements = [e for i, e in enumerate(updated.elements) if i != position]
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(elements=elements)

        self.change(container, fix, "drop ProfilerActivity.CUDA: there is no CUDA work to record")
