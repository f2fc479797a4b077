"""Recognise CUDA device values in source and build the target's spelling of them."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.rules.base.nodes import source_of
from torchport.targets import Target
from torchport.targets.devices import cuda_device, device_source, device_string


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain (non-bytes, non-f) string literal, else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        quote = node.quote
        body = node.value[len(node.prefix) + len(quote) : -len(quote)]
        if "\\" not in body and "\r" not in body:  # (most strings: their text is their value as it is)
            return body
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 (odd escapes: not a device literal)
            return None
        return value if isinstance(value, str) else None
    return None


def cuda_literal_index(node: cst.CSTNode) -> tuple[bool, str | None]:
    """(True, index) if `node` is the literal "cuda" or "cuda:N"."""
    value = string_value(node)
    return (False, None) if value is None else cuda_device(value)


def is_device_value(value: cst.BaseExpression) -> bool:
    """A device's name or a device, as written: a string, an f-string, `torch.device(...)`."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    return isinstance(value, cst.Call) and source_of(value.func) in ("torch.device", "device")


def quoted(template: cst.SimpleString, text: str) -> cst.SimpleString:
    """A string literal with `text`, in the quote style of `template`."""
    quote = template.quote
    return cst.SimpleString(f"{template.prefix}{quote}{text}{quote}")


def device_expression(target: Target, index: str | None, like: cst.SimpleString | None = None) -> str:
    """Source for the target device, optionally with a literal index (`"npu:1"`), in the quote
    style of `like` where the device is a plain string."""
    if like is not None and target.device_type is not None:
        return quoted(like, device_string(target.device_type, index, target.keeps_device_index)).value
    return device_source(target, index)
