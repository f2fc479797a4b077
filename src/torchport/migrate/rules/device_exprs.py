"""Recognise CUDA device values in source and build the target's spelling of them."""

from __future__ import annotations

import re

import libcst as cst

from torchport.targets import Target

CUDA_LITERAL = re.compile(r"cuda(?::(\d+))?")


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
    if value is None:
        return (False, None)
    match = CUDA_LITERAL.fullmatch(value)
    return (True, match.group(1)) if match else (False, None)


def quoted(template: cst.SimpleString, text: str) -> cst.SimpleString:
    """A string literal with `text`, in the quote style of `template`."""
    quote = template.quote
    return cst.SimpleString(f"{template.prefix}{quote}{text}{quote}")


def device_expression(target: Target, index: str | None, like: cst.SimpleString | None = None) -> str:
    """Source for the target device, optionally with a literal index (`"npu:1"`)."""
    if target.device_type is None:
        if index is None:
            return target.device_type_expr
        return f'f"{{{target.device_type_expr}}}:{index}"'
    text = target.device_type if index is None or not target.keeps_device_index else f"{target.device_type}:{index}"
    if like is not None:
        return quoted(like, text).value
    return repr(text).replace("'", '"')


def indexed_device_expression(target: Target, index_source: str) -> str:
    """Source for the target device with an index computed at run time."""
    if target.device_type is None:  # (torch.device takes an index of None as well, as `.cuda(None)` does)
        return f"torch.device({target.device_type_expr}, {index_source})"
    if not target.keeps_device_index:
        return f'"{target.device_type}"'
    return f'f"{target.device_type}:{{{index_source}}}"'
