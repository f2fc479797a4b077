"""Pinned host memory and visible devices.

`Tensor.pin_memory()` and `DataLoader(pin_memory=True)` pin host memory for a device; on the CPU
there is no device to pin for, so they are logged no-ops (torch itself would raise or warn). A
`pin_memory_device="cuda"` becomes the target's device type. CUDA_VISIBLE_DEVICES, when set at
start-up, is copied to the target's own variable (`visible_devices_env`) if that is unset.
"""

from __future__ import annotations

import functools
import inspect
import os

from torchport.apis.devices import CUDA_VISIBLE_DEVICES
from torchport.apis.memory import pinned_memory
from torchport.targets.devices import is_host
from torchport.targets.verdict import Kind, Verdict

ORDER = 50  # after patch_devices, before patch_compilers (session.py installs the families lowest first)


def install(session) -> None:
    import torch
    import torch.utils.data

    on_cpu = not pinned_memory(session.target).here(is_host(session.device_type))
    _patch_tensor_pin_memory(session, torch, on_cpu)
    _patch_data_loader(session, torch.utils.data.DataLoader, on_cpu)
    for dialect in session.mapper.dialects:  # (ASCEND_RT_VISIBLE_DEVICES too, where torch_npu is stood in for)
        _copy_visible_devices(session, dialect.visible_devices_env)


def _patch_tensor_pin_memory(session, torch, on_cpu: bool) -> None:
    original = torch.Tensor.pin_memory
    skipped = Verdict("torch.Tensor.pin_memory", Kind.NOOP, None, "no device to pin host memory for")
    mapper = session.mapper

    @functools.wraps(original)
    def pin_memory(self, *args, **kwargs):
        if on_cpu:
            session.log.note(skipped)
            return self
        if args or kwargs:  # the deprecated device argument
            device = args[0] if args else kwargs.pop("device")
            new = mapper.map(device)
            if new is not None:
                session.note_device("torch.Tensor.pin_memory", device, new)
                device = new
            return original(self, device)
        return original(self)

    session.book.replace(torch.Tensor, "pin_memory", pin_memory)


def _patch_data_loader(session, loader, on_cpu: bool) -> None:
    original = loader.__dict__["__init__"]
    signature = inspect.signature(original)
    skipped = Verdict("DataLoader(pin_memory=True)", Kind.NOOP, "DataLoader(pin_memory=False)",
                      "no device to pin host memory for")
    moved = Verdict("DataLoader(pin_memory_device='cuda')", Kind.SAME,
                    f"DataLoader(pin_memory_device={session.device_type!r})")

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        arguments = bound.arguments
        if on_cpu and arguments.get("pin_memory"):
            session.log.note(skipped)
            arguments["pin_memory"] = False
            arguments.pop("pin_memory_device", None)
        elif str(arguments.get("pin_memory_device", "")).startswith("cuda"):
            session.log.note(moved)
            arguments["pin_memory_device"] = session.device_type
        original(*bound.args, **bound.kwargs)

    session.book.replace(loader, "__init__", __init__)


def _copy_visible_devices(session, source: str | None = CUDA_VISIBLE_DEVICES) -> None:
    """Copy CUDA_VISIBLE_DEVICES (or `source`); a target variable that already holds the same value (copied by
    a launcher such as torchrun's agent, whose workers inherit it) is logged all the same, in the
    log of each process that runs user code (a start-up note: see CallLog.note_at)."""
    name = session.target.visible_devices_env
    value = os.environ.get(source) if source else None
    if not name or value is None or os.environ.get(name, value) != value:
        return
    if name not in os.environ:
        session.set_env(name, value)
    verdict = Verdict(f"{source}={value}", Kind.SAME, f"{name}={value}")
    session.log.note_at("(environment)", verdict, startup=True)
