"""What one CUDA API becomes on one target."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    SAME = "same"  # a 1:1 rename
    ADAPTED = "adapted"  # works, with other arguments or semantics: `note` says how
    NOOP = "no-op"  # harmless to drop; `value` stands in where the result is used
    UNSUPPORTED = "unsupported"  # a person must decide; never guessed


@dataclass(frozen=True)
class Verdict:
    api: str  # the CUDA API, e.g. "torch.cuda.synchronize"
    kind: Kind
    replacement: str | None = None  # dotted name of what to call instead
    note: str = ""
    value: str | None = None  # a Python literal that stands for the result of a no-op
    drop_args: bool = False  # the replacement takes none of the original arguments
    guard: str | None = None  # call the replacement only when this expression is true, else `value`
    device_first: bool = False  # the replacement takes the device type as its first argument
    index_first: bool = False  # the replacement takes an index where CUDA's takes any device (index, device, name)
    or_value: str | None = None  # the replacement may answer None (torch_npu's capability): this stands in then

    def describe(self) -> str:
        """One line for reports and the run-time log: `torch.cuda.x -> torch.npu.x [same]`."""
        target = self.replacement or (f"{self.value}" if self.value is not None else "(removed)")
        text = f"{self.api} -> {target} [{self.kind.value}]"
        return f"{text} {self.note}" if self.note else text


def same(api: str, replacement: str, note: str = "") -> Verdict:
    return Verdict(api, Kind.SAME, replacement, note)


def adapted(api: str, replacement: str, note: str, **extra) -> Verdict:
    return Verdict(api, Kind.ADAPTED, replacement, note, **extra)


def noop(api: str, note: str, value: str | None = None) -> Verdict:
    return Verdict(api, Kind.NOOP, None, note, value)


def unsupported(api: str, note: str) -> Verdict:
    return Verdict(api, Kind.UNSUPPORTED, None, note)
