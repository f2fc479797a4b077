"""TP017 and TP020: the profiler's CUDA activity, and a target's own profiler."""

from __future__ import annotations

import libcst as cst

from torchport.apis.profiler import (
    ACTIVITY, ACTIVITY_NAMES, AUTOGRAD_PROFILE, CPU_ACTIVITY, CUDA_ACTIVITY, DEVICE_KEYWORDS, drops_cuda_activity,
)
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import dotted_name, parse_expression, without_arguments
from torchport.migrate.rules.base.rule import ApiReferenceRule, Rule


class ProfilerActivityRule(Rule):
    """`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` asks the profiler for device
    work: the target's own activity (XPU; NPU, with torch_npu's profiler standing for torch's:
    ProfilerModuleRule), wherever the CUDA activity is named (`activities.append(...CUDA)` too:
    torch_npu's ProfilerActivity has no CUDA); on the CPU and MPS the CUDA activity goes (the profiler records nothing
    for it); on the device-agnostic target a list of CPU and CUDA becomes
    `torch.profiler.supported_activities()`. The autograd profiler's `use_device="cuda"` (or
    `use_cuda=True`) goes where the CUDA activity goes: torch warns there and records the CPU."""

    code = "TP017"
    order = 200
    mentions = rb"ProfilerActivity|use_cuda|use_device"
    reads = (*ACTIVITY_NAMES, AUTOGRAD_PROFILE)
    title = "profiler activities"
    readme = """`ProfilerActivity.CUDA` in profiler activities: dropped on cpu and mps, `XPU` on xpu, `NPU` on npu,
    `torch.profiler.supported_activities()` for a CPU+CUDA list on `accelerator`; `torch.autograd.profiler.profile(
    use_device="cuda")` / `use_cuda=True`: the keyword dropped on cpu and mps"""
    sample = "import torch\nactivities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if not drops_cuda_activity(self.target) or self.qualified_name(node.func) != AUTOGRAD_PROFILE:
            return
        asked = {a.keyword.value for a in node.args if a.keyword is not None and a.keyword.value in DEVICE_KEYWORDS}
        if asked:
            shown = ", ".join(f"{k}=" for k in sorted(asked))
            self.change(node, lambda updated: without_arguments(updated, asked),
                        f"drop {shown} of {AUTOGRAD_PROFILE}: there is no device work to record on {self.target.name} "
                        "(torch warns and records the CPU)")

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value != CUDA_ACTIVITY or self._activity(node) is None:
            return
        element = self.parent(node)
        container = self.parent(element)
        target = self.target
        listed = isinstance(element, cst.Element) and isinstance(container, (cst.List, cst.Tuple, cst.Set))
        if not listed:  # (`activities.append(ProfilerActivity.CUDA)`, a name bound to it: the target's activity, where it has one)
            if target.profiler_activity is not None and self._class_has_the_activity(node):
                self._record_the_targets(node)
            return
        if target.profiler_activity is not None and self._class_has_the_activity(node):
            self._record_the_targets(node)
        elif drops_cuda_activity(target):
            self._drop(container, element)
        elif target.device_chosen_at_run_time and self._cpu_and_cuda(container):
            new = "torch.profiler.supported_activities()"
            self.change(container, lambda _: parse_expression(new), f"profile {new}: the CPU and the device there is",
                        needs=new)
        else:
            self.report(node, Operation.NOTE, f"records no {target.name} work: {target.name}'s own profiler does",
                        api=f"{ACTIVITY}.{CUDA_ACTIVITY}")

    def _record_the_targets(self, node: cst.Attribute) -> None:
        activity = self.target.profiler_activity
        self.change(node, lambda updated: updated.with_changes(attr=cst.Name(activity)),
                    f"record {activity} work instead of CUDA work")

    def _class_has_the_activity(self, node: cst.Attribute) -> bool:
        """Whether the ProfilerActivity `node` reads from will have the target's activity: torch's
        (XPU), or the target's own profiler's (NPU), reached through torch.profiler's dotted name
        or a `from torch.profiler import` that ProfilerModuleRule moves whole."""
        if self.target.profiler_module is None or isinstance(node.value, cst.Attribute):
            return True
        return isinstance(node.value, cst.Name) and _moved_by_its_import(self, node.value.value)

    def _activity(self, node: cst.Attribute) -> str | None:
        name = self.qualified_name(node)
        return name if name is not None and name.rsplit(".", 1)[0] in ACTIVITY_NAMES else None

    def _cpu_and_cuda(self, container: cst.BaseExpression) -> bool:
        names = {self._activity(e.value) for e in container.elements if isinstance(e.value, cst.Attribute)}
        return len(container.elements) == 2 and {n.rsplit(".", 1)[1] for n in names if n} == {CPU_ACTIVITY, CUDA_ACTIVITY}

    def _drop(self, container, element) -> None:
        if len(container.elements) < 2:
            return  # (nothing would be left to profile)
        position = container.elements.index(element)

        def fix(updated):
            elements = [e for i, e in enumerate(updated.elements) if i != position]
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(elements=elements)

        self.change(container, fix, "drop ProfilerActivity.CUDA: there is no CUDA work to record")


PROFILER = "torch.profiler"
PROFILE = f"{PROFILER}.profile"


def _imports_from_profiler(statement: cst.CSTNode) -> bool:
    """`from torch.profiler import a, b` (names, not a star)."""
    return (
        isinstance(statement, cst.ImportFrom) and not statement.relative and statement.module is not None
        and dotted_name(statement.module) == PROFILER and not isinstance(statement.names, cst.ImportStar)
    )


def _moved_by_its_import(rule: Rule, name: str) -> bool:
    """Whether `name`, imported from torch.profiler at the top of the file, is imported from the
    target's own profiler after the migration (ProfilerModuleRule moves that import whole)."""
    for statement in rule.context.top_level_imports():
        for small in statement.body:
            if _imports_from_profiler(small) and any(_bound_name(alias) == name for alias in small.names):
                return _moves_whole(small, rule.target)
    return False


def _bound_name(alias: cst.ImportAlias) -> str | None:
    """The name an import alias binds (`b` for `a as b`)."""
    if alias.asname is not None:
        return alias.asname.name.value if isinstance(alias.asname.name, cst.Name) else None
    return alias.name.value if isinstance(alias.name, cst.Name) else None


def _moves_whole(statement: cst.ImportFrom, target) -> bool:
    """Whether the target's own profiler has every name `statement` imports from torch's, so
    that ProfilerModuleRule imports them all from it."""
    return all(isinstance(alias.name, cst.Name) and alias.name.value in target.profiler_names for alias in statement.names)


class ProfilerModuleRule(ApiReferenceRule):
    """torch's profiler records no work of a target that has a profiler of its own (npu:
    `torch_npu.profiler`, with torch's API and an NPU activity): `torch.profiler.profile`,
    `schedule`, `tensorboard_trace_handler`, `ProfilerActivity` and the rest become the target's,
    and so does `from torch.profiler import ...` when the target has every name it imports."""

    code = "TP020"
    order = 210
    mentions = rb"torch\.profiler|from torch import[^\n]*\bprofiler"
    prefix = PROFILER + "."
    reads = (PROFILER,)
    title = "the target's own profiler"
    readme = """npu: `torch.profiler.profile`, `schedule`, `tensorboard_trace_handler`, `ProfilerActivity`, ... →
    `torch_npu.profiler.*`, and `from torch.profiler import ...` when torch_npu's profiler has every name
    (torch's records no NPU work); torch's `experimental_config=` goes from a profile that becomes
    torch_npu's (it has its own)"""
    sample = "import torch\nwith torch.profiler.profile() as prof:\n    pass\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.profiler_module is not None

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:  # noqa: N802
        if not (_imports_from_profiler(node) and _moves_whole(node, self.target)):
            return
        module = self.target.profiler_module
        self.change(node, lambda updated: updated.with_changes(module=parse_expression(module)),
                    f"import from {module}: it records {self.target.name} work", api=PROFILER)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        """torch's `experimental_config` (Kineto's, for CUDA) is not one the target's profile
        takes (torch_npu has its own `_ExperimentalConfig`): it goes, and the row says so."""
        func = node.func
        config = next((a for a in node.args if a.keyword is not None and a.keyword.value == "experimental_config"), None)
        if config is None or "profile" not in self.target.profiler_names or self.qualified_name(func) != PROFILE:
            return
        if not (dotted_name(func) == PROFILE or isinstance(func, cst.Name) and _moved_by_its_import(self, func.value)):
            return  # (torch's own profile stays, and takes its config)
        made_by = config.value.func if isinstance(config.value, cst.Call) else config.value
        if (self.qualified_name(made_by) or dotted_name(made_by) or "").startswith(f"{self.target.profiler_module}."):
            return  # (the target's own config already)
        self.change(node, _without_keyword("experimental_config"),
                    f"drop experimental_config: torch's is for CUDA; {self.target.profiler_module}"
                    "._ExperimentalConfig is the target's", api=PROFILE)

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        name = api[len(self.prefix):].split(".")[0]
        if name not in self.target.profiler_names:
            return
        inner = node
        while isinstance(inner, cst.Attribute) and dotted_name(inner) != f"{PROFILER}.{name}":
            inner = inner.value
        if not isinstance(inner, cst.Attribute):
            return  # (a name imported from torch.profiler: its import says where it comes from)
        new = f"{self.target.profiler_module}.{name}"
        self.change(inner, lambda _: parse_expression(new), f"{PROFILER}.{name} -> {new}: it records "
                    f"{self.target.name} work", api=f"{PROFILER}.{name}", needs=new)


def _without_keyword(keyword: str):
    def fix(updated: cst.Call) -> cst.Call:
        args = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == keyword)]
        if args and len(args) < len(updated.args):
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=args)

    return fix
