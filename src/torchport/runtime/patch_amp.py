"""`torch.autocast("cuda")`, `torch.amp.GradScaler("cuda")` (whose default device is "cuda"),
`torch.amp.custom_fwd/custom_bwd(device_type="cuda")` and the autocast state queries.

The device type becomes the target's; autocast's float16 becomes what the target says
(`float16_autocast`: bfloat16 on the CPU, where float16 autocast is very slow).
"""

from __future__ import annotations

import functools
import sys

from torchport.apis.amp import DEVICE_KEYWORD, STATE_QUERIES, TORCH_AMP
from torchport.runtime.callers import top_package
from torchport.runtime.patch_compilers import traced_as
from torchport.targets.verdict import Kind, Verdict

ORDER = 30  # after patch_devices, before patch_compilers (session.py installs the families lowest first)


def install(session) -> None:
    import torch
    import torch.amp.autocast_mode as autocast_mode

    _patch_autocast(session, torch.amp.autocast)
    _patch_grad_scaler(session, torch.amp.GradScaler)
    for name in DEVICE_KEYWORD:
        original = getattr(autocast_mode, name)
        session.book.replace_everywhere((torch.amp, autocast_mode), name, original,
                                        _device_type_keyword(session, f"{TORCH_AMP}.{name}", original))
    for name in STATE_QUERIES:
        original = getattr(torch, name)
        session.book.replace(torch, name, device_type_first(session, f"torch.{name}", original))


def _patch_autocast(session, autocast) -> None:
    original = autocast.__dict__["__init__"]
    target_type, log, sources = session.device_type, session.log, session.mapper.sources
    verdicts = {}

    def verdict(source, dtype, new_dtype):
        key = (source, dtype, new_dtype)
        if key not in verdicts:
            note = "" if dtype is new_dtype else f"{_name(dtype)} becomes {_name(new_dtype)} on {target_type}"
            if not session.autocast_allowed():
                note = f"off: this {target_type} has no native {_name(new_dtype)}, float32 is faster"
            kind = Kind.SAME if not note else Kind.ADAPTED
            verdicts[key] = Verdict(f"torch.autocast({source!r})", kind, f"torch.autocast({target_type!r})", note)
        return verdicts[key]

    @functools.wraps(original)
    def __init__(self, device_type, *args, **kwargs):
        if device_type in sources:
            if args:
                dtype = args[0]
                new_dtype = session.autocast_dtype(dtype)
                args = (new_dtype, *args[1:])
            else:
                dtype = kwargs.get("dtype")
                new_dtype = kwargs["dtype"] = session.autocast_dtype(dtype)
            log.note(verdict(device_type, dtype, new_dtype))
            device_type = target_type
            if not session.autocast_allowed():
                if len(args) > 1:  # (dtype, enabled, cache_enabled)
                    args = (args[0], False, *args[2:])
                else:
                    kwargs["enabled"] = False
        original(self, device_type, *args, **kwargs)

    session.book.replace(autocast, "__init__", __init__)


def _patch_grad_scaler(session, scaler) -> None:
    original = scaler.__dict__["__init__"]
    device_type, sources = session.device_type, session.mapper.sources
    moved = {source: Verdict(f"torch.amp.GradScaler({source!r})", Kind.SAME, f"torch.amp.GradScaler({device_type!r})")
             for source in sources}

    @functools.wraps(original)
    def __init__(self, device="cuda", *args, **kwargs):
        if device in moved:
            session.log.note(moved[device])
            device = device_type
        original(self, device, *args, **kwargs)

    session.book.replace(scaler, "__init__", __init__)


def _device_type_keyword(session, api: str, original):
    """custom_fwd/custom_bwd(device_type="cuda")."""
    device_type = session.device_type
    moved = {source: Verdict(f"{api}(device_type={source!r})", Kind.SAME, f"{api}(device_type={device_type!r})")
             for source in session.mapper.sources}

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if kwargs.get("device_type") in moved:
            session.log.note(moved[kwargs["device_type"]])
            kwargs["device_type"] = device_type
        return original(*args, **kwargs)

    return wrapper


def device_type_first(session, api: str, original):
    """torch.is_autocast_enabled("cuda") and friends: the device type is the first argument.
    torch itself asks about CUDA's own state (torch.compile saves and restores every device's
    autocast state around a compilation) and gets the true answer, as with torch.device("cuda")."""
    device_type = session.device_type
    moved = {source: Verdict(f"{api}({source!r})", Kind.SAME, f"{api}({device_type!r})")
             for source in session.mapper.sources}

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if args and args[0] in moved:
            if top_package(sys._getframe(1)) != "torch":
                session.log.note(moved[args[0]])
                args = (device_type, *args[1:])
        elif kwargs.get("device_type") in moved and top_package(sys._getframe(1)) != "torch":
            session.log.note(moved[kwargs["device_type"]])
            kwargs["device_type"] = device_type
        return original(*args, **kwargs)

    def traced(*args, **kwargs):
        if args and args[0] in moved:
            args = (device_type, *args[1:])
        elif kwargs.get("device_type") in moved:
            kwargs["device_type"] = device_type
        return original(*args, **kwargs)

    return traced_as(wrapper, traced)


def _name(dtype) -> str:
    return str(dtype)
