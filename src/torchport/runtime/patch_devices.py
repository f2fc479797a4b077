"""Device values wherever torch takes one: `torch.device(...)` itself, the tensor factories,
`Tensor.new_*`, `Tensor.to` / `Module.to` / `Module.to_empty`, `Tensor.cuda` / `Module.cuda`,
`torch.load(map_location=...)` and `torch.set_default_device`.

Which callables take a device comes from `apis.devices`; what a device becomes comes from the
target (through `DeviceMapper`). Wrappers are plain functions with a fast path: an argument that is
not a str, int or torch.device is never looked at twice.

torch.compile (Dynamo) traces Python functions, but not these wrappers, which read frames to log: each
carries a twin for Dynamo to trace in its place (`patch_compilers.traced_as`), with the same device
mapping and no log. Compiled code maps devices as eager code does; its calls are not logged.
TorchScript compiles no wrapper: `patch_compilers` tells it which operator each one stands for.
"""

from __future__ import annotations

import functools
import sys

from torchport.apis import devices as device_apis
from torchport.runtime.callers import top_package
from torchport.runtime.patch_compilers import traced_as
from torchport.runtime.proxies import class_proxy
from torchport.targets.devices import CUDA_DEVICE_TYPE, HOST_DEVICE_TYPE, is_host
from torchport.targets.verdict import Kind, Verdict

ORDER = 10  # before every family that replaces torch's (patch_torch_npu, 5, replaces none): it captures the original torch.device


def install(session) -> None:
    import torch

    _patch_device_class(session, torch)
    _patch_generator_class(session, torch)
    for name in sorted(device_apis.FACTORIES):
        original = getattr(torch, name, None)
        if original is not None:
            session.book.replace(torch, name, _keyword_mapper(session, f"torch.{name}", original))
    for name in sorted(device_apis.TENSOR_FACTORY_METHODS):
        original = getattr(torch.Tensor, name, None)
        if original is not None:
            wrapper = _keyword_mapper(session, f"torch.Tensor.{name}", original)
            session.book.replace(torch.Tensor, name, wrapper)
    for owner, owner_name in ((torch.Tensor, "torch.Tensor"), (torch.nn.Module, "torch.nn.Module")):
        for name in sorted(device_apis.TO_METHODS):
            original = getattr(owner, name, None)
            if original is not None:
                wrapper = _to_mapper(session, f"{owner_name}.{name}", original)
                session.book.replace(owner, name, wrapper)
    _patch_cuda_methods(session, torch)
    _patch_load(session, torch)
    _patch_jit_load(session, torch)
    original = torch.set_default_device
    session.book.replace(torch, "set_default_device", _positional_mapper(session, "torch.set_default_device", original))


def _patch_device_class(session, torch) -> None:
    """`torch.device("cuda:0")` builds the target's device; isinstance(x, torch.device) still works.
    Inside torch itself "cuda" keeps its meaning: torch compares with `torch.device("cuda")` to
    find its own CUDA backends, and must not find the target's there."""
    real = torch.device
    mapper = session.mapper
    sources = mapper.sources  # "cuda" (and "npu" where the stand-in torch_npu is served)

    def construct(cls, *args, **kwargs):
        first = args[0] if args else kwargs.get("type")
        kind = type(first)
        if (kind is str and not first.startswith(sources)) or (kind is real and first.type not in sources):
            return real(*args, **kwargs)
        is_cuda, index = mapper.source_index(first)
        if not is_cuda or top_package(sys._getframe(1)) == "torch":
            return real(*args, **kwargs)  # torch's own CUDA literals (`torch.device("cuda") in devices`)
        if len(args) > 1:
            index = args[1]
        elif "index" in kwargs:
            index = kwargs["index"]
        result = real(mapper.spelling(index))
        source = first.partition(":")[0] if kind is str else getattr(first, "type", CUDA_DEVICE_TYPE)  # (an int: CUDA's)
        shown = f"{source}:{index}" if index is not None else source
        session.note_device("torch.device", shown, str(result), depth=1)
        return result

    session.book.replace(torch, "device", class_proxy(real, construct, as_call=True))


def _patch_generator_class(session, torch) -> None:
    """`torch.Generator(device="cuda")` makes a generator for the target's device."""
    real, mapper = torch.Generator, session.mapper

    def construct(cls, device=HOST_DEVICE_TYPE):
        new = mapper.map(device)
        if new is not None:
            session.note_device("torch.Generator", device, new, keyword="device")
            device = new
        return real(device)

    session.book.replace(torch, "Generator", class_proxy(real, construct, as_call=True))


def _keyword_mapper(session, api: str, original):
    """A wrapper that maps the `device=` keyword (factories, `Tensor.new_*`)."""
    mapped, real, note = session.mapper.mapped, session.mapper.real_device, session.log.note_frame
    verdicts = session.device_verdicts(api, "device")

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if kwargs:
            device = kwargs.get("device")
            kind = type(device)  # torch's own calls pass a torch.device: one memo look-up
            if kind is real or kind is str or kind is int:
                new = mapped[device]
                if new is not None:
                    note(verdicts[device], sys._getframe(1))
                    kwargs["device"] = new
        return original(*args, **kwargs)

    target_form = session.mapper.target_form

    def traced(*args, **kwargs):
        if "device" in kwargs:
            new = target_form(kwargs["device"])
            if new is not None:
                kwargs["device"] = new
        return original(*args, **kwargs)

    return traced_as(wrapper, traced)


def _to_mapper(session, api: str, original):
    """A wrapper for `.to(...)`: the first positional argument or `device=` may be a device.
    GradScaler and the optimizers call it every step with a torch.device or a dtype, so the
    path that changes nothing is type checks and at most a memo look-up per argument."""
    mapped, real, note = session.mapper.mapped, session.mapper.real_device, session.log.note_frame
    positional, keyword = session.device_verdicts(api), session.device_verdicts(api, "device")

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        if args:
            first = args[0]
            kind = type(first)
            if kind is real or kind is str or kind is int:
                new = mapped[first]
                if new is not None:
                    note(positional[first], sys._getframe(1))
                    args = (new, *args[1:])
        if kwargs:
            device = kwargs.get("device")
            kind = type(device)
            if kind is real or kind is str or kind is int:
                new = mapped[device]
                if new is not None:
                    note(keyword[device], sys._getframe(1))
                    kwargs["device"] = new
        return original(self, *args, **kwargs)

    target_form = session.mapper.target_form

    def traced(self, *args, **kwargs):
        if args:
            new = target_form(args[0])
            if new is not None:
                args = (new, *args[1:])
        if "device" in kwargs:
            new = target_form(kwargs["device"])
            if new is not None:
                kwargs["device"] = new
        return original(self, *args, **kwargs)

    return traced_as(wrapper, traced)


def _positional_mapper(session, api: str, original):
    """A wrapper for a function whose first argument is a device (`set_default_device`)."""
    to_target, note = session.mapper.map, session.note_device

    @functools.wraps(original)
    def wrapper(device, *args, **kwargs):
        new = to_target(device)
        if new is not None:
            note(api, device, new)
            device = new
        return original(device, *args, **kwargs)

    return wrapper


def _patch_cuda_methods(session, torch) -> None:
    """`x.cuda(i)` / `module.cuda(i)` / `storage.cuda(i)` move to the target device (with `.to`,
    which all honour); so do `x.npu(i)` and the others where the stand-in torch_npu is served
    (each dialect's method is named after its device type, as torch names a backend's)."""
    tensor_to, module_to = torch.Tensor.to, torch.nn.Module.to
    for method in session.mapper.sources:
        _patch_device_methods(session, torch, method, tensor_to, module_to)


def _patch_device_methods(session, torch, method_name: str, tensor_to, module_to) -> None:
    mapper, log = session.mapper, session.log
    method = getattr(session.target, "tensor_method", None)
    storages = torch.storage._StorageBase  # (UntypedStorage's Python methods; TypedStorage calls them)
    storage_to = storages.to
    verdicts = {}

    def verdict(owner: str, device):
        key = (owner, device)
        if key not in verdicts:
            spelled = mapper.spelling(mapper.source_index(device)[1] if device is not None else None)
            if method:
                replacement, kind = f"{owner}.{method}", Kind.SAME
            else:
                replacement, kind = f"{owner}.to({spelled!r})", Kind.ADAPTED
            dropped = device is not None and ":" not in spelled
            note = f"device {spelled!r}" + ("; the index is dropped" if dropped else "")
            verdicts[key] = Verdict(f"{owner}.{method_name}", kind, replacement, note)
        return verdicts[key]

    def target_device(device):
        if device is None:
            return mapper.current()
        new = mapper.map(device)
        return device if new is None else new

    def tensor_cuda(self, device=None, non_blocking=False, **kwargs):
        log.note(verdict("torch.Tensor", device))
        return tensor_to(self, target_device(device), non_blocking=non_blocking, **kwargs)

    def module_cuda(self, device=None):
        log.note(verdict("torch.nn.Module", device))
        return module_to(self, target_device(device))

    def storage_cuda(self, device=None, non_blocking=False):  # (map_location=lambda storage, loc: storage.cuda())
        log.note(verdict("torch.UntypedStorage", device))
        return storage_to(self, device=target_device(device), non_blocking=non_blocking)

    def traced_device(device):  # target_device for Dynamo (no memo filled)
        if device is None:
            return mapper.current()
        new = mapper.target_form(device)
        return device if new is None else new

    def tensor_cuda_traced(self, device=None, non_blocking=False, **kwargs):
        return tensor_to(self, traced_device(device), non_blocking=non_blocking, **kwargs)

    def module_cuda_traced(self, device=None):
        return module_to(self, traced_device(device))

    traced_as(tensor_cuda, tensor_cuda_traced)
    traced_as(module_cuda, module_cuda_traced)

    tensor_cuda.__doc__ = torch.Tensor.cuda.__doc__
    module_cuda.__doc__ = torch.nn.Module.cuda.__doc__
    session.book.replace(torch.Tensor, method_name, tensor_cuda)
    session.book.replace(torch.nn.Module, method_name, module_cuda)
    storage_cuda.__doc__ = storages.cuda.__doc__
    session.book.replace(storages, method_name, storage_cuda)
    if not hasattr(torch.Tensor, f"is_{method_name}"):
        _patch_is_device(session, torch, method_name)


def _patch_is_device(session, torch, device_type: str) -> None:
    """`x.is_npu` answers what `x.is_cuda` does: tensors live on the target, so a script's branch
    for its own device is taken where CUDA's would be (see the runtime's docstring)."""
    answered = Verdict(f"torch.Tensor.is_{device_type}", Kind.ADAPTED, "torch.Tensor.is_cuda",
                       f"tensors live on {session.device_type}: answers as is_cuda does")
    note = session.log.note_frame

    def is_device(self):
        note(answered, sys._getframe(1))
        return self.is_cuda

    session.book.replace(torch.Tensor, f"is_{device_type}", property(is_device))


def _patch_load(session, torch) -> None:
    """`torch.load(map_location=...)`: CUDA locations become the target's. With no map_location,
    storages saved on CUDA are restored on the target (torch would fail: no CUDA here)."""
    import torch.serialization as serialization

    original = serialization.load
    mapper = session.mapper
    on_cpu = is_host(session.device_type)
    restore = serialization.default_restore_location
    unmapped = Verdict(
        "torch.load(map_location=None)", Kind.ADAPTED, f"torch.load(map_location={mapper.device_type!r})",
        "only CUDA storages move; others load where they were saved",
    )

    def restore_cuda_on_target(storage, location):
        is_cuda, index = mapper.source_index(location)
        if not is_cuda:
            return None  # torch's default restore
        session.log.note(unmapped, depth=1)
        return storage if on_cpu else restore(storage, mapper.spelling(index))

    def map_location_for(value):
        if value is None:
            return restore_cuda_on_target, None
        if isinstance(value, dict):
            mapped = {key: mapper.map(item) or item for key, item in value.items()}
            return mapped, (None if mapped == value else mapped)
        new = mapper.map(value)
        return (value, None) if new is None else (new, new)

    @functools.wraps(original)
    def load(f, *args, **kwargs):
        if args:
            before = args[0]
            location, changed = map_location_for(before)
            args = (location, *args[1:])
        else:
            before = kwargs.get("map_location")
            location, changed = map_location_for(before)
            kwargs["map_location"] = location
        if changed is not None:
            session.note_device("torch.load", before if not isinstance(before, dict) else "{...}",
                                changed if not isinstance(changed, dict) else "{...}", keyword="map_location")
        return original(f, *args, **kwargs)

    session.book.replace_everywhere((torch, serialization), "load", original, load)


def _patch_jit_load(session, torch) -> None:
    """`torch.jit.load(f)`: a TorchScript module saved on CUDA loads onto the target. Its
    `map_location` is a device (not a function): with none, every tensor goes to the target's
    device type, as `torchport migrate` writes it (TP023); a CUDA one becomes the target's."""
    import torch.jit
    import torch.jit._serialization as serialization

    original = torch.jit.load
    mapper = session.mapper
    unmapped = Verdict("torch.jit.load(map_location=None)", Kind.ADAPTED,
                       f"torch.jit.load(map_location={mapper.device_type!r})", "its tensors load on the target")

    @functools.wraps(original)
    def load(f, map_location=None, *args, **kwargs):
        if map_location is None:
            session.log.note(unmapped)
            return original(f, mapper.device_type, *args, **kwargs)
        new = mapper.map(map_location)
        if new is not None:
            session.note_device("torch.jit.load", map_location, new, keyword="map_location")
            map_location = new
        return original(f, map_location, *args, **kwargs)

    session.book.replace_everywhere((torch.jit, serialization), "load", original, load)
