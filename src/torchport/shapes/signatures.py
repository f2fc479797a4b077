"""The shapes of what a call takes and returns: tensors found in arguments, lists, tuples, dicts.

A signature is a tuple of shapes (`torch.Size`, hashable) in the order the tensors were found.
Non-tensors are left out, as Ascend's hook does, but tensors inside lists and dicts count
(`torch.cat([a, b])`, a model returning a dict), which Ascend's misses. At most MAX_TENSORS are
taken from one call, so that `x.split(1)` into 4096 pieces costs no more than a few.
"""

from __future__ import annotations

MAX_TENSORS = 16
# Argument types that never hold a tensor; the capture adds torch's (dtype, device, Size, ...).
PLAIN_TYPES = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis), slice})
_MAX_DEPTH = 3


def shapes_of(value, tensor_type) -> tuple:
    """The shapes of the tensors in `value` (a tensor, or lists, tuples and dict values of them)."""
    if isinstance(value, tensor_type):
        return (value.shape,)
    found: list = []
    _collect(value, tensor_type, found, 0)
    return tuple(found)


def call_shapes(args: tuple, kwargs: dict | None, tensor_type, plain: frozenset = PLAIN_TYPES) -> tuple:
    """The shapes of the tensors among a call's positional and keyword arguments. It runs on every
    recorded call: values of a `plain` type (None, numbers, dtypes, ...) are passed over with one
    set look-up, and containers inside containers are the only recursion."""
    found: list = []
    _scan(args, tensor_type, found, plain)
    if kwargs:
        _scan(kwargs.values(), tensor_type, found, plain)
    return tuple(found) if len(found) <= MAX_TENSORS else tuple(found[:MAX_TENSORS])


def _scan(values, tensor_type, found: list, plain: frozenset) -> None:
    for value in values:
        if type(value) in plain:
            continue
        if isinstance(value, tensor_type):
            found.append(value.shape)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if type(item) in plain:
                    continue
                if isinstance(item, tensor_type):
                    found.append(item.shape)
                elif isinstance(item, (list, tuple, dict)):
                    _collect(item, tensor_type, found, 2)
        elif isinstance(value, dict):
            _collect(value, tensor_type, found, 1)


def _collect(value, tensor_type, found: list, depth: int) -> None:
    if len(found) >= MAX_TENSORS or depth > _MAX_DEPTH:
        return
    if isinstance(value, tensor_type):
        found.append(value.shape)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, tensor_type, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, tensor_type, found, depth + 1)


def tensor_paths(value, tensor_type, path: str = "batch", depth: int = 0) -> list[tuple[str, object]]:
    """(path, shape) for each tensor in a batch: `batch[0]`, `batch["input_ids"]`, ..., so that a
    remedy can name the tensor to mark (`torch._dynamo.mark_dynamic(batch[0], 1)`). The same
    tensors, in the same order, as `shapes_of` finds."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, tensor_type):
        return [(path, value.shape)]
    if isinstance(value, dict):
        items = ((f"{path}[{key!r}]", item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    else:
        return []
    found: list = []
    for item_path, item in items:
        found += tensor_paths(item, tensor_type, item_path, depth + 1)
        if len(found) >= MAX_TENSORS:
            return found[:MAX_TENSORS]
    return found
