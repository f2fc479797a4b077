"""Record the aten ops code runs, as the profiler sees them, with a TorchDispatchMode.

A plain dispatch mode sees only the outermost ops: while its `__torch_dispatch__` runs, the mode
is off the stack, so the ops an op's kernel calls (aten::convolution -> aten::_convolution ->
aten::mkldnn_convolution) pass unseen. The profiler sees those, and so must we, for the two to
list the same ops. So the recorder runs each op's kernel itself, with the mode back on the stack:
it finds the kernel the dispatcher would pick below the Python key (the backend's own, else the
composite one) and calls exactly that kernel (`OpOverload._op_dk`). Results are unchanged: it is
the kernel the op would have run anyway. Where no such kernel is registered (a backend's fallback,
an op without tensor arguments, a tensor subclass that dispatches in Python) the op runs as usual
and the ops inside it go unrecorded.

A number a kernel passed for a Tensor argument (`remainder.Scalar` calls `remainder.Tensor` with
its scalar made a "wrapped number" tensor) reaches the mode as a Python number, and calling the
op again with it fails for every op but the few the dispatcher lets take numbers (add, mul, to,
...): `(w * 3.7) % 1.` raised there. So before the op is called again each such number is made a
wrapped number again (`wrapped_number`), which type promotion treats as the scalar it was.

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
        recorded = self.recording and not (frames and frames[-1].func is func)
        if recorded and func.namespace not in UNRECORDED_NAMESPACES:
            self._record(func, args, kwargs, _caller(frames))
        args, kwargs = as_dispatched(func, args, kwargs)
        if not recorded:
            return func(*args, **kwargs)
        key = kernel_key(func, args, kwargs)
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
    would run something else (a fallback, a subclass's __torch_dispatch__) or there is no tensor
    to dispatch on."""
    keys = torch._C._dispatch_tls_local_include_set()
    for leaf in tree_leaves((args, kwargs)):
        if isinstance(leaf, torch.Tensor):
            own = torch._C._dispatch_keys(leaf)
            if own.has(DispatchKey.Python):  # the subclass's __torch_dispatch__ runs it
                return None
            keys = keys | own
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


NUMBERS = (bool, int, float, complex)


def as_dispatched(func, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call with each number that stands for a Tensor argument made the wrapped number the
    dispatcher had made of it (the call itself, untouched, where there is none: the common case)."""
    slots = _tensor_slots(func)
    if not any(isinstance(args[i], NUMBERS) for i in slots.positions if i < len(args)) and not any(
            isinstance(kwargs.get(name), NUMBERS) for name in slots.names):
        return args, kwargs
    args = tuple(wrapped_number(value) if i in slots.positions and isinstance(value, NUMBERS) else value
                 for i, value in enumerate(args))
    kwargs = {name: wrapped_number(value) if name in slots.names and isinstance(value, NUMBERS) else value
              for name, value in kwargs.items()}
    return args, kwargs


@dataclass(frozen=True)
class _Slots:
    positions: frozenset[int]  # positional arguments of type Tensor or Tensor?
    names: frozenset[str]  # the same, by name (keyword-only ones included)


@lru_cache(maxsize=None)
def _tensor_slots(func) -> _Slots:
    arguments = [(index, argument) for index, argument in enumerate(func._schema.arguments)
                 if str(argument.type) in ("Tensor", "Optional[Tensor]")]
    return _Slots(frozenset(i for i, a in arguments if not a.kwarg_only), frozenset(a.name for _, a in arguments))


_AUTOGRAD_KEYS = torch._C.DispatchKeySet(DispatchKey.AutogradCPU) | torch._C.DispatchKeySet(
    DispatchKey.AutogradOther) | torch._C.DispatchKeySet(DispatchKey.ADInplaceOrView)
_PYTHON_KEYS = torch._C.DispatchKeySet(DispatchKey.Python) | torch._C.DispatchKeySet(
    DispatchKey.PythonTLSSnapshot) | torch._C.DispatchKeySet(DispatchKey.PreDispatch)


def wrapped_number(value):
    """`value` as a 0-dim CPU tensor flagged as a wrapped number, as the dispatcher makes one: in
    type promotion it counts as a Python scalar (int tensor % 2.5 is float32, not float64).
    Python has no constructor for one; autograd keeps the one `mul` was given, and hands it out
    unchanged as `_saved_other`. Inside the mode autograd is switched off (its keys excluded) and
    the Python key would call the modes: the multiplication runs with both put right."""
    include = torch._C._dispatch_tls_local_include_set() - _PYTHON_KEYS
    exclude = torch._C._dispatch_tls_local_exclude_set() - _AUTOGRAD_KEYS
    with torch._C.DisableTorchFunction(), torch.inference_mode(False), torch.enable_grad(), \
            torch._C._ForceDispatchKeyGuard(include, exclude):
        return (torch.zeros((), requires_grad=True) * value).grad_fn._saved_other


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
