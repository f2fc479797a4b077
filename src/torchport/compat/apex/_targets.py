"""What the targets say for the device a model lives on: the half type of its autocast, whether
autocast is worth keeping on there, whether SyncBatchNorm runs there.

Under `torchport run` the session answers for its own device type (it knows the target); elsewhere
(a migrated file importing the stand-in, a test) the target of that device type answers, and a
device no target describes (CUDA itself) keeps CUDA's float16, autocast and SyncBatchNorm.
"""

from __future__ import annotations

import torch

from torchport import targets
from torchport.active_session import active
from torchport.apis.distributed import sync_batchnorm
from torchport.targets.expressions import evaluate
from torchport.targets.devices import HOST_DEVICE_TYPE, is_host


def _session_for(device_type: str):
    session = active()
    return session if session is not None and session.device_type == device_type else None


def target_for(device_type: str):
    """The target this device type runs under: the session's, else the one whose device type it is."""
    session = _session_for(device_type)
    if session is not None:
        return session.target
    return next((t for t in targets.all_targets().values() if t.device_type == device_type), None)


def half_dtype(device_type: str, dtype=torch.float16):
    """What CUDA's half type `dtype` becomes on `device_type` (the target's `float16_autocast`)."""
    session = _session_for(device_type)
    if session is not None:
        return session.autocast_dtype(dtype)
    target = target_for(device_type)
    if dtype is not torch.float16 or target is None or not target.float16_autocast:
        return dtype
    return evaluate(target.float16_autocast, device_type, target.definitions)


def autocast_allowed(device_type: str) -> bool:
    """Whether autocast stays on on `device_type` (the target's `autocast_enabled`)."""
    session = _session_for(device_type)
    if session is not None:
        return session.autocast_allowed()
    target = target_for(device_type)
    if target is None or not target.autocast_enabled:
        return True
    return bool(evaluate(target.autocast_enabled, device_type, target.definitions))


def syncs_batchnorm(device_type: str) -> bool:
    """Whether SyncBatchNorm runs on `device_type` (the target's rule; elsewhere BatchNorm stays)."""
    target = target_for(device_type)
    return target is None or sync_batchnorm(target).here(is_host(device_type))


def device_type_of(*holders) -> str:
    """The device type of the first parameter (or tensor) found in `holders` (modules,
    optimizers, tensors); the session's, else the host's, when there is none."""
    for holder in holders:
        for tensor in _tensors(holder):
            return tensor.device.type
    session = active()
    return session.device_type if session is not None else HOST_DEVICE_TYPE


def _tensors(holder):
    if isinstance(holder, torch.Tensor):
        yield holder
    elif isinstance(holder, torch.nn.Module):
        yield from holder.parameters()
        yield from holder.buffers()
    elif hasattr(holder, "param_groups"):
        for group in holder.param_groups:
            yield from group["params"]
