"""Memory: pinned host memory (`x.pin_memory()`, `pin_memory=True`, `pin_memory_device=`).

Pinned host memory speeds copies to a device; with no device there is nothing to pin for, and
torch raises (`x.pin_memory()`, `torch.empty(..., pin_memory=True)`) or warns
(`DataLoader(pin_memory=True)`). Memory queries and their host answers are the targets'
(`targets/fallbacks.py`).
"""

from __future__ import annotations

from torchport.apis.devices import Presence, device_presence

PIN_MEMORY = "pin_memory"


def pinned_memory(target) -> Presence:
    """Whether pinning host memory has a device to pin for on `target`."""
    return device_presence(target)
