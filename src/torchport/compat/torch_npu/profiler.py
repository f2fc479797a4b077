"""torch_npu.profiler: torch_npu's profiler has torch.profiler's API (it records the NPU's work),
so its names are torch.profiler's; `ProfilerActivity.NPU` is the target's activity (the CPU's
where the target records none), and `experimental_config` (NPU trace options) is dropped."""

from __future__ import annotations

import functools

from torchport.active_session import active
from torchport.apis.profiler import CPU_ACTIVITY
from torchport.compat.torch_npu import _log
from torchport.targets.npu import TARGET as NPU
from torchport.targets.verdict import Kind, Verdict

PREFIX = NPU.profiler_module  # "torch_npu.profiler"
NATIVE = "torch.profiler"
EXPERIMENTAL = "experimental_config"
# names of torch_npu.profiler that torch.profiler has by the same name and meaning
SAME = ("schedule", "tensorboard_trace_handler", "ProfilerAction", "supported_activities")
# torch_npu's trace options: accepted and dropped with the experimental_config that holds them
OPTIONS = ("ExportType", "ProfilerLevel", "AiCMetrics", "HostSystem")


def __getattr__(name: str):
    if _log.unlogged_miss(__file__, name):
        raise AttributeError(name)
    import torch.profiler

    if name in SAME and hasattr(torch.profiler, name):
        _log.note(Verdict(f"{PREFIX}.{name}", Kind.SAME, f"{NATIVE}.{name}"))
        return getattr(torch.profiler, name)
    if name == "profile":
        return _profile(torch.profiler.profile)
    if name == "ProfilerActivity":
        return _activities(torch.profiler.ProfilerActivity)
    if name in OPTIONS:
        return _Options(f"{PREFIX}.{name}")
    if name == "_ExperimentalConfig":
        return _ExperimentalConfig
    raise _log.missing(f"{PREFIX}.{name}")


def _profile(native):
    @functools.wraps(native)
    def profile(*args, **kwargs):
        if args:  # (activities, the first parameter)
            args = (_distinct(args[0]), *args[1:])
        elif kwargs.get("activities") is not None:
            kwargs["activities"] = _distinct(kwargs["activities"])
        dropped = kwargs.pop(EXPERIMENTAL, None) is not None
        note = f"{EXPERIMENTAL} (NPU trace options) dropped" if dropped else ""
        _log.note(Verdict(f"{PREFIX}.profile", Kind.ADAPTED if dropped else Kind.SAME, f"{NATIVE}.profile", note))
        return native(*args, **kwargs)

    return profile


def _distinct(activities):
    """[CPU, NPU] where NPU is the CPU's activity: torch's profiler takes each activity once."""
    return list(dict.fromkeys(activities)) if activities is not None else None


def _activities(native):
    """CPU as torch has it; NPU: the activity that records the target's device work."""
    chosen = _target_activity(native)
    shown = f"{NATIVE}.ProfilerActivity.{chosen.name}"
    _log.note(Verdict(f"{PREFIX}.ProfilerActivity.{NPU.profiler_activity}", Kind.ADAPTED, shown,
                      "the activity that records the run's target"))
    return type("ProfilerActivity", (), {CPU_ACTIVITY: getattr(native, CPU_ACTIVITY), NPU.profiler_activity: chosen})


def _target_activity(native):
    session = active()
    if session is None:
        return getattr(native, CPU_ACTIVITY)
    name = session.target.profiler_activity or session.device_type.upper()
    return getattr(native, name, None) or getattr(native, CPU_ACTIVITY)


class _Options:
    """An enum of torch_npu's trace options: any member is its own name (the config is dropped)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, member: str) -> str:
        if member.startswith("__"):
            raise AttributeError(member)
        return f"{self._name}.{member}"


class _ExperimentalConfig:
    """torch_npu's NPU trace options: kept, never used (profile drops them)."""

    def __init__(self, *args, **kwargs) -> None:
        self.options = kwargs
