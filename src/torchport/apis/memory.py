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

# Memory snapshots: torch.cuda.memory's recorder of allocation history and its snapshot, private by
# name but documented as the way to read CUDA memory use (pytorch.org/docs/stable/torch_cuda_memory.html)
# and called so by trainers (torchtitan, Megatron). torch.xpu.memory has the same three, and torch_npu's
# torch.npu.memory too (torch_npu/npu/memory.py: enabled, context, stacks, max_entries, device).
MEMORY_HISTORY_MODULE = "torch.cuda.memory"
MEMORY_HISTORY = ("_record_memory_history", "_snapshot", "_dump_snapshot")
MEMORY_HISTORY_APIS = tuple(f"{MEMORY_HISTORY_MODULE}.{name}" for name in MEMORY_HISTORY)
EMPTY_SNAPSHOT = '{"segments": [], "device_traces": []}'  # what _snapshot() holds where nothing allocated on a device
