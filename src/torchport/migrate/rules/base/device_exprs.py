"""Recognise CUDA device values in source and build the target's spelling of them."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.nodes import source_of
from torchport.string_literals import quoted, string_value
from torchport.targets import Target
from torchport.targets.devices import cuda_device, device_source, device_string


def cuda_literal_index(node: cst.CSTNode) -> tuple[bool, str | None]:
    """(True, index) if `node` is the literal "cuda" or "cuda:N"."""
    value = string_value(node)
    return (False, None) if value is None else cuda_device(value)


def is_device_value(value: cst.BaseExpression) -> bool:
    """A device's name or a device, as written: a string, an f-string, `torch.device(...)`."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    return isinstance(value, cst.Call) and source_of(value.func) in ("torch.device", "device")


def device_expression(target: Target, index: str | None, like: cst.SimpleString | None = None) -> str:
    """Source for the target device, optionally with a literal index (`"npu:1"`), in the quote
    style of `like` where the device is a plain string."""
    if like is not None and not target.device_chosen_at_run_time:
        return quoted(like, device_string(target.device_type, index, target.keeps_device_index)).value
    return device_source(target, index)
