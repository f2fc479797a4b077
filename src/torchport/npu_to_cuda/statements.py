"""The statements NPU code runs only for the NPU, which go: torch_npu's tuning calls and flags
(targets/npu.py TUNING_*), the NPU stack's environment settings, and a profiler configuration read
only as the experimental_config= that torch's profile does not take."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ScopeProvider

from torchport.findings import Code
from torchport.npu_to_cuda import changes, names, strings
from torchport.targets import npu as npu_facts

ENVIRON = "os.environ"
ENV_SETTERS = ("os.environ.setdefault", "os.putenv")


@dataclass(frozen=True)
class Dropped:
    message: str
    api: str
    code: Code = changes.TUNING


def dropped_call(walk, node: cst.Expr) -> Dropped | None:
    """`torch.npu.set_compile_mode(...)`, `os.environ.setdefault("TASK_QUEUE_ENABLE", "1")`."""
    call = node.value
    if not isinstance(call, cst.Call):
        return None
    func = walk.imported(call.func) or ""
    if names.is_tuning_call(func):
        return Dropped(f"drop {names.canonical(func)}(...): NPU-only tuning, nothing to tune off the NPU", func)
    if func in ENV_SETTERS and call.args:
        env = strings.string_value(call.args[0].value)
        if env is not None and names.is_npu_setting(env):
            return Dropped(f"drop {func}({env!r}, ...): a setting of the NPU's software stack", env)
    return None


def dropped_assignment(walk, node: cst.Assign) -> Dropped | None:
    """`torch.npu.config.allow_internal_format = False`, `os.environ["TASK_QUEUE_ENABLE"] = "1"`,
    `config = torch_npu.profiler._ExperimentalConfig(...)`."""
    targets = [t.target for t in node.targets]
    flags = [names.canonical(walk.imported(t) or "") for t in targets]
    if all(names.is_tuning_flag(flag) for flag in flags):
        return Dropped(f"drop {flags[0]} = ...: NPU-only tuning", flags[0])
    settings = [_environ_key(walk, t) for t in targets]
    if all(s is not None and names.is_npu_setting(s) for s in settings):
        return Dropped(f"drop os.environ[{settings[0]!r}] = ...: a setting of the NPU's software stack", settings[0])
    if _is_profiler_config(walk, node):
        return Dropped("drop the NPU profiler's experimental config: torch's profile takes none",
                       npu_facts.PROFILER_CONFIG, changes.PROFILER)
    return None


def _environ_key(walk, target: cst.BaseExpression) -> str | None:
    if not (isinstance(target, cst.Subscript) and walk.imported(target.value) == ENVIRON and len(target.slice) == 1):
        return None
    index = target.slice[0].slice
    return strings.string_value(index.value) if isinstance(index, cst.Index) else None


def _is_profiler_config(walk, node: cst.Assign) -> bool:
    """A name bound to torch_npu's profiler config and read only as a profile's experimental_config."""
    if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Call)):
        return False
    if walk.imported(node.value.func) != npu_facts.PROFILER_CONFIG:
        return False
    scope = walk.get_metadata(ScopeProvider, node, None)
    if scope is None:
        return False
    accesses = [access for assignment in scope.assignments[node.targets[0].target.value] for access in assignment.references]
    return all(_is_config_argument(walk, access.node) for access in accesses)


def _is_config_argument(walk, node: cst.CSTNode) -> bool:
    parent = walk.parent(node)
    return (isinstance(parent, cst.Arg) and parent.keyword is not None
            and parent.keyword.value == npu_facts.PROFILER_CONFIG_KEYWORD)
