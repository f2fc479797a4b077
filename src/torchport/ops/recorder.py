"""Record the aten ops code runs, as the profiler sees them, with a TorchDispatchMode.

A plain dispatch mode sees only the outermost ops: while its `__torch_dispatch__` runs, the mode
is off the stack, so the ops an op's kernel calls (aten::convolution -> aten::_convolution ->
aten::mkldnn_convolution) pass unseen. The profiler sees those, and so must we, for the two to
list the same ops. So the recorder runs each op's kernel itself, with the mode back on the stack:
it finds the kernel the dispatcher would pick below the Python key (the backend's own, else the
composite one) and calls exactly that kernel (`OpOverload._op_dk`). Results are unchanged: it is
the kernel the op would have run anyway. Where no such kernel is registered (a backend's fallback,
an op without tensor arguments) the op runs as usual and the ops inside it go unrecorded.

Each call is recorded with its overload, input shapes (one per schema argument, as the profiler
prints them), element types, and its caller: the op it was made inside ("" at the top level).
CompositeImplicitAutograd ops are no callers (ops.json leaves them out, see opset): the nearest
op around them is.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from collections import Counter
from dataclasses import dataclass

import torch
from torch._C import DispatchKey
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from torchport.ops import dtypes

BELOW_PYTHON = torch._C._dispatch_keyset_full_after(DispatchKey.Python)
# Where the dispatcher looks when a backend has no kernel of its own, in its order.
COMPOSITE_KEYS = (
    DispatchKey.CompositeExplicitAutogradNonFunctional,
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeImplicitAutograd,
)
UNRECORDED_NAMESPACES = {"profiler"}  # record_function's bookkeeping, not computation


@dataclass(frozen=True)
class Call:
    name: str  # "aten::addmm"
    overload: str  # "default"
    shapes: tuple
    dtypes: tuple[str, ...]
    caller: str  # "aten::_convolution", or "" at the top level


@dataclass(frozen=True)
class _Frame:
    func: object
    implicit: bool  # a CompositeImplicitAutograd kernel: no caller of its own


class OpRecorder(TorchDispatchMode):
    """`with OpRecorder() as recorder:` ... then `recorder.calls` (Call -> how many times)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[Call] = Counter()
        self.devices: set[str] = set()
        self.recording = True
        self._local = threading.local()

    def _frames(self) -> list[_Frame]:
        frames = getattr(self._local, "frames", None)
        if frames is None:
            frames = self._local.frames = []
        return frames

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        frames = self._frames()
        # detach() of a tensor made under a mode calls back into the mode with the same op
        if not self.recording or (frames and frames[-1].func is func):
            return func(*args, **kwargs)
        key = kernel_key(func, args, kwargs)
        if func.namespace not in UNRECORDED_NAMESPACES:
            self._record(func, args, kwargs, _caller(frames))
        if key is None:
            return func(*args, **kwargs)
        frames.append(_Frame(func, key == DispatchKey.CompositeImplicitAutograd))
        torch._C._push_on_torch_dispatch_stack(self)
        try:
            return func._op_dk(key, *args, **kwargs)
        finally:
            torch._C._pop_torch_dispatch_stack(None)
            frames.pop()

    def _record(self, func, args: tuple, kwargs: dict, caller: str) -> None:
        shapes, types, devices = describe(func, args, kwargs)
        self.devices.update(devices)
        self.calls[Call(func._schema.name, func._overloadname, shapes, types, caller)] += 1


def _caller(frames: list[_Frame]) -> str:
    for frame in reversed(frames):
        if not frame.implicit:
            return frame.func._schema.name
    return ""


def kernel_key(func, args: tuple, kwargs: dict) -> DispatchKey | None:
    """The key of the kernel the dispatcher would run for this call below the Python key: the
    backend's own kernel (or BackendSelect's, for factories), else a composite one; None when it
    would run something else (a fallback) or there is no tensor to dispatch on."""
    keys = torch._C._dispatch_tls_local_include_set()
    tensors = [leaf for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, torch.Tensor)]
    for tensor in tensors:
        keys = keys | torch._C._dispatch_keys(tensor)
    if not tensors and _number_for_tensor(func, args):
        keys = keys | _host_keys()
    keys = (keys - torch._C._dispatch_tls_local_exclude_set()) & BELOW_PYTHON
    name = func.name()
    while True:
        key = keys.highestPriorityTypeId()
        if key == DispatchKey.Undefined:
            return None
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
            return key
        if key != DispatchKey.BackendSelect:  # BackendSelect falls through when it has no kernel
            break
        keys = keys.remove(key)
    for composite in COMPOSITE_KEYS:
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, composite):
            return composite
    return None


def _number_for_tensor(func, args: tuple) -> bool:
    """Whether a Python number stands for a Tensor argument: a number the dispatcher wrapped into
    a CPU tensor (`x.mul_(0.9)` converts it with aten::to), handed to the mode as the number."""
    for argument, value in zip(func._schema.arguments, args):
        if isinstance(value, (bool, int, float, complex)) and str(argument.type) == "Tensor":
            return True
    return False


@lru_cache(maxsize=None)
def _host_keys():
    return torch._C._dispatch_keys(torch.empty(()))


def describe(func, args: tuple, kwargs: dict) -> tuple[tuple, tuple[str, ...], set[str]]:
    """(a shape per schema argument, the element types of inputs with a dimension, devices)."""
    shapes, types, devices = [], set(), set()
    for index, argument in enumerate(func._schema.arguments):
        if not argument.kwarg_only and index < len(args):
            value = args[index]
        else:
            value = kwargs.get(argument.name)
        tensors = _tensors(value)
        shapes.append(_shape(value, str(argument.type)))
        for tensor in tensors:
            devices.add(tensor.device.type)
            if tensor.dim():
                types.add(dtypes.from_torch(tensor.dtype))
    return tuple(shapes), tuple(sorted(types)), devices


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _shape(value: object, type_name: str):
    """As the profiler prints it: a tensor's sizes, a list of sizes for a Tensor[] argument, else
    [] (a number, a list of optional tensors, anything else)."""
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if type_name == "List[Tensor]" and isinstance(value, (list, tuple)):
        return tuple(tuple(t.shape) for t in value if isinstance(t, torch.Tensor))
    return ()
