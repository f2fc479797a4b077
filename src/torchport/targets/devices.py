"""How a CUDA device is spelled, and how a target spells it: one answer for the rewriter, which
writes it as source (`"npu:1"`, `f"{DEVICE_TYPE}:{rank}"`), and for the patcher, which maps values
at run time ("cuda:1" -> "npu:1", torch.device("cuda", 1) -> torch.device("npu:1")).

Only whole device values are CUDA devices: "cuda" and "cuda:N", never a string that merely
contains "cuda". The index is kept where the target keeps it (`Target.keeps_device_index`) and
dropped on the CPU, which has one device.
"""

from __future__ import annotations

import re
from functools import lru_cache

CUDA_DEVICE_TYPE = "cuda"
CUDA_DEVICE = re.compile(r"cuda(?::(\d+))?")

# torch's device type of the host. Mechanisms that meet a device type at run time (the
# device-agnostic target's, a tensor's) ask `is_host`; statically the target says it (`has_device`).
HOST_DEVICE_TYPE = "cpu"


def is_host(device_type: str | None) -> bool:
    """Whether `device_type` is the host's: one device, no index, no stream allocator, nothing to pin for."""
    return device_type == HOST_DEVICE_TYPE


# torch's device types, as `torch.device` reads them ("cuda", "cpu", "npu:1", "privateuseone"...).
_ANY_DEVICE = re.compile(r"[a-z_]+(?::\d+)?")
_DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "npu", "hpu", "meta", "mtia", "xla", "ipu", "ve", "lazy",
                           "vulkan", "hip", "fpga", "maia", "privateuseone"})


def is_device_string(text: str) -> bool:
    """Whether `text` names a device torch knows ("cuda", "cpu", "npu:1"), not some other word."""
    return bool(_ANY_DEVICE.fullmatch(text)) and text.split(":")[0] in _DEVICE_TYPES


def cuda_device(text: str) -> tuple[bool, str | None]:
    """(True, the index as written or None) if `text` is "cuda" or "cuda:N"; else (False, None)."""
    match = CUDA_DEVICE.fullmatch(text)
    return (True, match.group(1)) if match else (False, None)


def source_device(text: str, device_types: tuple[str, ...]) -> tuple[bool, str | None]:
    """`cuda_device` for a script written for any of `device_types` ("cuda", and "npu" where
    `run` serves the stand-in torch_npu): (True, the index as written or None) for "<type>" or
    "<type>:N"."""
    match = _device_pattern(device_types).fullmatch(text)
    return (True, match.group(1)) if match else (False, None)


@lru_cache(maxsize=None)
def _device_pattern(device_types: tuple[str, ...]):
    return re.compile(rf"(?:{'|'.join(map(re.escape, device_types))})(?::(\d+))?")


def device_string(device_type: str, index: int | str | None, keeps_index: bool) -> str:
    """The target's device string for CUDA device `index` (None: the current device)."""
    if index is None or not keeps_index or is_host(device_type):
        return device_type
    return f"{device_type}:{index}"


def device_source(target, index: str | None) -> str:
    """Source for the target's device, with a literal index (`"npu:1"`) or none (`"npu"`); on a
    target whose device type is known only at run time, built from its expression."""
    if target.device_chosen_at_run_time:
        return target.device_type_expr if index is None else f'f"{{{target.device_type_expr}}}:{index}"'
    return '"' + device_string(target.device_type, index, target.keeps_device_index) + '"'


def indexed_device_source(target, index_source: str) -> str:
    """Source for the target's device with an index computed at run time (`index_source`):
    `torch.device(type, index)`, which takes an index of None as well (the current device, as
    `.cuda(None)` means), where an f-string would spell "npu:None"."""
    if target.device_chosen_at_run_time:
        return f"torch.device({target.device_type_expr}, {index_source})"
    if not target.keeps_device_index or is_host(target.device_type):
        return f'"{target.device_type}"'
    return f'torch.device("{target.device_type}", {index_source})'


def any_device_source(target, value_source: str) -> str:
    """Source for the target's device for a value that may be an index, None, a device or its
    name (whatever `x.cuda(value)` takes): the target's device function where it has one."""
    if target.device_function is not None:
        return f"{target.device_function}({value_source})"
    return indexed_device_source(target, value_source)
