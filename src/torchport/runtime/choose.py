"""Which target to run on, and what device type it means here: the device type the session
evaluates the target's source expressions against (targets/expressions.py)."""

from __future__ import annotations

import importlib
import importlib.util

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
    if target.device_chosen_at_run_time or is_host(target.device_type):
        return None
    module = getattr(torch, target.device_type, None)
    if module is None or not module.is_available():
        return f"torch.{target.device_type}.is_available() is False"
    return None


def device_type_of(target) -> str:
    """The device type the target means on this machine (the accelerator target decides here)."""
    import torch

    if not target.device_chosen_at_run_time:
        return target.device_type
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type
    return HOST_DEVICE_TYPE
