"""Which target to run on, what device type it means here, and the target's source expressions.

Targets describe some facts as source expressions (e.g. the accelerator target's DEVICE_TYPE, the
distributed backend); at run time they are evaluated once, against the device type resolved here.
"""

from __future__ import annotations

import importlib
import importlib.util

from torchport.runtime.callers import TARGET_CODE
from torchport.targets.base import definitions_used, modules_used
from torchport.targets.devices import HOST_DEVICE_TYPE, is_host


class TargetError(ValueError):
    """The requested target is unknown or not available on this machine (one line)."""


def resolve(name: str):
    """(Target, device type) for `name`; "auto" picks the first available device target, else cpu."""
    from torchport import targets

    if name == "auto":
        for candidate in targets.auto_order():  # the first available device target, else cpu
            if unavailable_reason(targets.get(candidate)) is None:
                return resolve(candidate)
        return resolve(targets.HOST)
    try:
        target = targets.get(name)
    except ValueError as error:
        raise TargetError(str(error)) from None
    reason = unavailable_reason(target)
    if reason is not None:
        raise TargetError(f"target {name} is not available here: {reason}")
    return target, device_type_of(target)


def unavailable_reason(target) -> str | None:
    """Why `target` cannot run on this machine, or None when it can."""
    import torch

    if target.setup_import:
        if importlib.util.find_spec(target.setup_import) is None:
            return f"{target.setup_import} is not installed"
        importlib.import_module(target.setup_import)
    device_type = target.device_type
    if device_type is None or is_host(device_type):
        return None
    module = getattr(torch, device_type, None)
    if module is None or not module.is_available():
        return f"torch.{device_type}.is_available() is False"
    return None


def device_type_of(target) -> str:
    """The device type the target means on this machine (the accelerator target decides here)."""
    import torch

    if target.device_type is not None:
        return target.device_type
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type
    return HOST_DEVICE_TYPE


def evaluate(expression: str, device_type: str, definitions: dict[str, str] | None = None):
    """Evaluate one of the target's source expressions (dist_backend, guard, ...) here and now,
    with the target's `definitions` that it names (DEVICE_TYPE is the device type resolved here)."""
    namespace = {"DEVICE_TYPE": device_type, "__name__": TARGET_CODE}
    definitions = definitions or {}
    statements = [definitions[name] for name in definitions_used(definitions, expression) if name not in namespace]
    for source in [*statements, expression]:
        for module in modules_used(source):  # torch, contextlib, platform, ...
            root = module.split(".")[0]
            if root not in namespace and root not in definitions:
                importlib.import_module(module)  # (a submodule, such as os.path, as `import os.path` has it)
                namespace[root] = importlib.import_module(root)
    for statement in statements:
        exec(compile(statement, "<torchport target>", "exec"), namespace)
    return eval(compile(expression, "<torchport target>", "eval"), namespace)
