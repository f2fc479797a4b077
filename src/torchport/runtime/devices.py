"""What a CUDA device value becomes on the target, at run time: "cuda", "cuda:1", 1,
torch.device("cuda", 1). The spelling is targets/devices.py's, as the rewriter's is.

Only whole CUDA device values are rewritten, never substrings (Ascend's transfer_to_npu replaced
"cuda" inside any string argument, so `torch.load("ckpt/cuda_best.pt")` opened the wrong file).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchport.apis.devices import CUDA_VISIBLE_DEVICES
from torchport.apis.distributed import CUDA_DIST_BACKEND
from torchport.targets.devices import CUDA_DEVICE_TYPE, device_string, is_host, source_device
from torchport.targets.verdict import Kind, Verdict


@dataclass(frozen=True)
class Dialect:
    """The device API a script is written for, whose values `run` maps to the target's: CUDA's,
    and the NPU's where the stand-in torch_npu is served (runtime/patch_torch_npu.py)."""

    device_type: str  # "cuda": its devices, `x.cuda()`, torch.autocast("cuda")
    dist_backend: str  # "nccl"
    visible_devices_env: str | None  # "CUDA_VISIBLE_DEVICES"


CUDA = Dialect(CUDA_DEVICE_TYPE, CUDA_DIST_BACKEND, CUDA_VISIBLE_DEVICES)


def dialect_of(target) -> Dialect:
    """The dialect of scripts written for `target` (its device type, backend and variable)."""
    return Dialect(target.device_type, ast.literal_eval(target.dist_backend), target.visible_devices_env)


def cuda_index(value, device_types: tuple[str, ...] = (CUDA_DEVICE_TYPE,)) -> tuple[bool, int | None]:
    """(is a CUDA device value, its index or None) for a str, int or torch.device-like value;
    a device of any of `device_types` counts as CUDA's."""
    kind = type(value)
    if kind is str:
        is_cuda, index = source_device(value, device_types)
        return is_cuda, (int(index) if index is not None else None)
    if kind is int:  # bools are not device indices
        return (value >= 0), value
    device_type = getattr(value, "type", None)
    if device_type in device_types and hasattr(value, "index"):
        return True, value.index
    return False, None


class Memo(dict):
    """value -> compute(value), computed on first sight: later look-ups are a plain dict
    subscript (no Python call), which is what the hot wrappers want. At most `limit` entries
    are kept; values past that are computed every time."""

    def __init__(self, compute, limit: int = 4096) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit

    def __missing__(self, value):
        found = self.compute(value)
        if len(self) < self.limit:
            self[value] = found
        return found


class DeviceMapper:
    """Maps CUDA device values to the target's, keeping the value's kind (str, int, torch.device).

    `mapped[value]` is the fast form of `map(value)` for callers that have checked that
    `type(value)` is str, int or `real_device` (bools, floats and others must not reach it: a
    dict would take True for 1)."""

    def __init__(self, device_type: str, keeps_index: bool, real_device: type) -> None:
        self.device_type = device_type
        self.keeps_index = keeps_index and not is_host(device_type)
        self.real_device = real_device  # the original torch.device class, never the proxy
        self.mapped = Memo(self._target_form)
        self.dialects: tuple[Dialect, ...] = (CUDA,)
        self.sources: tuple[str, ...] = (CUDA.device_type,)  # the device types mapped to the target's

    def add_dialect(self, dialect: Dialect) -> None:
        """Map `dialect`'s devices too (before the patches that read `sources` are installed)."""
        self.dialects = (*self.dialects, dialect)
        self.sources = tuple(d.device_type for d in self.dialects)
        self.mapped.clear()

    def source_index(self, value) -> tuple[bool, int | None]:
        """`cuda_index` for the devices of every dialect mapped here."""
        return cuda_index(value, self.sources)

    def spelling(self, index: int | None) -> str:
        """The target's device string for CUDA device `index` (None: the current device)."""
        return device_string(self.device_type, index, self.keeps_index)

    def map(self, value):
        """The target's form of `value`, or None when `value` is not a CUDA device."""
        kind = type(value)
        if kind is str or kind is int or kind is self.real_device:
            return self.mapped[value]
        return None

    def target_form(self, value):
        """`map(value)` without the memo, for code that Dynamo traces (which must not fill a dict
        that lives outside the graph)."""
        kind = type(value)
        if kind is str or kind is int or kind is self.real_device:
            return self._target_form(value)
        return None

    def _target_form(self, value):
        is_cuda, index = self.source_index(value)
        if not is_cuda:
            return None
        if type(value) is self.real_device:
            return self.real_device(self.spelling(index))
        return self.spelling(index)

    def current(self):
        """The target device that `x.cuda()` (no index) means."""
        return self.real_device(self.device_type)

    def verdict(self, api: str, before, after, note: str = "", keyword: str | None = None) -> Verdict:
        """The log's verdict for one device conversion: `torch.zeros(device='cuda:1') -> ...`."""
        dropped = self.source_index(before)[1] is not None and ":" not in str(after)
        kind = Kind.ADAPTED if dropped else Kind.SAME
        if dropped and not note:
            note = f"the device index is dropped: one {self.device_type} device"
        prefix = f"{keyword}=" if keyword else ""
        return Verdict(f"{api}({prefix}{_show(before)})", kind, f"{api}({prefix}{_show(after)})", note)


def _show(value) -> str:
    return repr(str(value)) if type(value).__name__ == "device" else repr(value)
