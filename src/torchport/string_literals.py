"""String literals in LibCST trees: their value, a new one in their quote style, and whether one
stands as a key or an attribute name (never a value a rewrite may change). Shared by migrate's
device-literal rule and the NPU conversion, which read CUDA's and the NPU's strings alike."""

from __future__ import annotations

from typing import Callable

import libcst as cst

ATTRIBUTE_FUNCTIONS = {"getattr", "hasattr", "setattr", "delattr"}  # their second argument names an attribute
KEY_METHODS = {"get", "pop", "setdefault"}  # their first argument is a key


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain (non-bytes, non-f) string literal, else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        quote = node.quote
        body = node.value[len(node.prefix) + len(quote) : -len(quote)]
        if "\\" not in body and "\r" not in body:  # (most strings: their text is their value as it is)
            return body
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 (odd escapes: not a value of ours)
            return None
        return value if isinstance(value, str) else None
    return None


def quoted(template: cst.SimpleString, text: str) -> cst.SimpleString:
    """A string literal with `text`, in the quote style of `template`."""
    quote = template.quote
    return cst.SimpleString(f"{template.prefix}{quote}{text}{quote}")


def is_key_argument(parent: cst.CSTNode | None, parent_of: Callable[[cst.CSTNode], cst.CSTNode | None]) -> bool:
    """Whether `parent`, the node a string literal stands in, is an argument that names a key
    (the first of `.get/.pop/.setdefault`) or an attribute (the second of `getattr` and its kin)."""
    if not isinstance(parent, cst.Arg) or parent.keyword is not None:
        return False
    call = parent_of(parent)
    if not isinstance(call, cst.Call):
        return False
    position = next(i for i, arg in enumerate(call.args) if arg is parent)
    func = call.func
    if isinstance(func, cst.Name) and func.value in ATTRIBUTE_FUNCTIONS:
        return position == 1
    return isinstance(func, cst.Attribute) and func.attr.value in KEY_METHODS and position == 0
