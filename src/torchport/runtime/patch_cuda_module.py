"""The `torch.cuda` and `torch.cuda.amp` APIs, each replaced according to its verdict.

For every API in `targets.surface.cuda_apis()` the target's verdict decides the replacement:
  same / adapted  call the replacement (with no arguments where the verdict drops them; where the
                  verdict has a guard that is false here, return the verdict's value instead)
  no-op           return the verdict's value (or None)
  unsupported     raise UnsupportedOnTarget naming the API and the target
Submodules, module objects and plain values (`torch.cuda.has_magma`) are left alone: a module
attribute read cannot be intercepted cheaply; their functions are patched where they are used.

Callers in the "honest" packages (torch itself, accelerate, transformers, triton, ...) get the
original function: they probe the hardware and must see the truth.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import inspect
import sys

from torchport.apis.amp import AMP_PREFIX, AUTOCAST, GRAD_SCALER, TORCH_AMP
from torchport.apis.cuda_module import is_patched, kind
from torchport.apis.legacy_types import is_legacy_type
from torchport.runtime.callers import HONEST, SCRIPT
from torchport.runtime.hosttime import HostEvent
from torchport.runtime.patch_compilers import traced_as
from torchport.runtime.proxies import class_proxy
from torchport.runtime.software_questions import asks_for_software
from torchport.targets.devices import is_host
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind, Verdict

ORDER = 20  # after patch_devices, before patch_compilers (session.py installs the families lowest first)


def install(session) -> None:
    import torch.cuda.amp  # noqa: F401  (makes the submodule importable below)

    for api in cuda_apis():
        module_name, name = api.rsplit(".", 1)
        owner = importlib.import_module(module_name)
        original = getattr(owner, name, None)
        replacement = redirection(session, api, original)
        if replacement is None:
            continue
        session.book.replace(owner, name, replacement)
        submodules = [m for n, m in list(sys.modules.items()) if n.startswith(module_name + ".") and m]
        session.book.replace_everywhere(submodules, name, original, replacement)


def redirection(session, api: str, original, shown_as: str | None = None, honest=None):
    """What the script's `api` (a torch.cuda or torch.cuda.amp name, whose object is `original`)
    becomes on the session's target, or None where it is left as it is. Its calls are logged as
    `shown_as` (default: `api`; the stand-in torch.npu logs its own names); honest callers get
    `honest` (default: `original`)."""
    if original is None or not is_patched(kind(original)):
        return None
    name = api.rsplit(".", 1)[1]
    verdict, act, also = _action(session, api, name, original)
    if shown_as is not None:
        verdict = dataclasses.replace(verdict, api=shown_as)
    honest = original if honest is None else honest
    if _is_legacy_type_renamed(verdict, original):
        # `x.type(T)` and the legacy constructors accept only the real class, not a proxy:
        # install it itself (its uses are not logged).
        replacement = _resolve(verdict.replacement) if verdict.kind is Kind.SAME else session.evaluate(verdict.replacement)
        return replacement if isinstance(replacement, type) else None  # (a class this torch lacks: left)
    if isinstance(original, type):
        return class_proxy(original, _guarded_class(session, verdict, honest, act), also, as_call=True)
    asked_honestly = (functools.partial(asks_for_software, session.target.name)
                      if name == "is_available" and not api.startswith(AMP_PREFIX) else None)
    return functools.wraps(original)(_guarded(session, verdict, honest, act, asked_honestly))


def _is_legacy_type_renamed(verdict, original) -> bool:
    """`torch.cuda.FloatTensor -> torch.FloatTensor [same]` (or the class the accelerator's
    device type has, chosen here) and the other legacy typed classes."""
    name = verdict.api.rsplit(".", 1)[1]
    return (
        isinstance(original, type)
        and verdict.kind in (Kind.SAME, Kind.ADAPTED)
        and name == original.__name__ and is_legacy_type(name)
    )


def _guarded(session, verdict, original, act, asked_honestly=None):
    """The replacement: honest callers get `original`, the script gets `act` (and a log line).
    A caller's module seen before is sorted with one look-up, inline (no call of ours).
    `asked_honestly(frame)`: where the script's own call gets `original` too (is_available asked
    about other software's CUDA build, software_questions.py)."""
    sorts, sort_frame, note = session.sorter.sorts, session.sorter.script_frame, session.log.note_frame

    def replacement(*args, **kwargs):
        frame = sys._getframe(1)
        sort = sorts.get(frame.f_globals.get("__name__"))
        if sort is not SCRIPT:
            frame = None if sort is HONEST else sort_frame(frame)
            if frame is None:
                return original(*args, **kwargs)
        if asked_honestly is not None and asked_honestly(frame):
            return original(*args, **kwargs)
        note(verdict, frame)
        return act(*args, **kwargs)

    def traced(*args, **kwargs):  # in compiled code: the script's answer, not logged
        return act(*args, **kwargs)

    return traced_as(replacement, traced)


def _guarded_class(session, verdict, original, act):
    """`_guarded` for a class: the proxy's metaclass `__call__` itself (no frame of ours between
    it and the caller, for classes built every step such as torch.cuda.amp.autocast)."""
    sorts, sort_frame, note = session.sorter.sorts, session.sorter.script_frame, session.log.note_frame

    def construct(cls, *args, **kwargs):
        frame = sys._getframe(1)
        sort = sorts.get(frame.f_globals.get("__name__"))
        if sort is not SCRIPT:
            frame = None if sort is HONEST else sort_frame(frame)
            if frame is None:
                return original(*args, **kwargs)
        note(verdict, frame)
        return act(*args, **kwargs)

    return construct


def _action(session, api: str, name: str, original):
    """(verdict to log, what the script's call does, extra classes for isinstance)."""
    target = session.target
    verdict = target.verdict(api)
    amp = api.startswith(AMP_PREFIX)
    if not amp and name == "is_available":  # the target's answer; libraries that probe hardware get the real one
        verdict = _with_honest_note(session, verdict)
    if not amp and name == "Event" and target.host_timing:
        return verdict, _host_event_class(session), (HostEvent,)
    if amp and verdict.replacement and verdict.replacement.startswith(f"{TORCH_AMP}."):
        return verdict, _amp_action(session, name, original), ()
    if verdict.kind is Kind.UNSUPPORTED:
        return verdict, raiser(session, verdict), ()
    if verdict.kind is Kind.NOOP or verdict.replacement is None:
        return verdict, _returner(session, verdict.value), ()
    if verdict.guard and not session.evaluate(verdict.guard):
        shown = verdict.value if verdict.value is not None else "None"
        skipped = Verdict(verdict.api, verdict.kind, verdict.replacement,
                          f"{verdict.note}; false here, so it returns {shown}", verdict.value)
        return skipped, _returner(session, verdict.value), ()
    named = _is_dotted(verdict.replacement) and verdict.replacement.split(".")[0] not in target.definitions
    replacement = _resolve(verdict.replacement) if named else session.evaluate(verdict.replacement)
    if replacement is None:
        missing = Verdict(api, Kind.UNSUPPORTED, None, f"{verdict.replacement} does not exist in this torch")
        return missing, raiser(session, missing), ()
    act = (lambda *args, **kwargs: replacement()) if verdict.drop_args else replacement
    if name == "is_available":  # asked once: a plain answer is what torch.compile can trace
        answer = bool(replacement())
        act = lambda *args, **kwargs: answer  # noqa: E731
    if verdict.device_first:
        act = functools.partial(replacement, session.device_type)
    if verdict.index_first:
        act = _taking_any_device(act)
    if verdict.or_value is not None:
        act = _or_value(act, session.evaluate(verdict.or_value))
    also = (replacement,) if isinstance(replacement, type) else ()
    return verdict, act, also


def _or_value(function, value):
    """`function`, answering `value` where it answers None (torch_npu's capability, unset)."""

    def call(*args, **kwargs):
        answer = function(*args, **kwargs)
        return value if answer is None else answer

    return call


def _taking_any_device(function):
    """`function(index, ...)` called as its CUDA counterpart is: with an index, None, a device or its name."""
    import torch

    def call(device=None, *args, **kwargs):
        index = device if device is None or isinstance(device, int) else torch.device(device).index
        return function(index, *args, **kwargs)

    return call


def _with_honest_note(session, verdict: Verdict) -> Verdict:
    named = [p for p in ("accelerate", "transformers", "triton") if p in session.honest]
    named = named or sorted(session.honest)[:3]
    more = ", ..." if len(session.honest) > len(named) else ""
    note = f"the script runs on {session.device_type}; hardware probes in {', '.join(named)}{more} see the real answer"
    return dataclasses.replace(verdict, note=f"{verdict.note}; {note}" if verdict.note else note)


def _host_event_class(session):
    sync = None
    if not is_host(session.device_type):
        import torch

        sync = getattr(torch, session.device_type).synchronize
    return type("Event", (HostEvent,), {"synchronize_device": staticmethod(sync) if sync else None})


def _amp_action(session, name: str, original):
    """torch.cuda.amp.X -> torch.amp.X on the target's device type."""
    import torch

    device_type = session.device_type
    if name == GRAD_SCALER:
        real = torch.amp.GradScaler
        return lambda *args, **kwargs: real(device_type, *args, **kwargs)
    if name == AUTOCAST:
        return _autocast_action(session, torch.amp.autocast, original)
    real = getattr(torch.amp, name)  # custom_fwd, custom_bwd

    def decorator(function=None, **kwargs):
        return real(function, device_type=device_type, **kwargs)

    return decorator


def _autocast_action(session, real, original):
    """torch.cuda.amp.autocast(enabled, dtype, cache_enabled) -> torch.amp.autocast(device_type, ...).
    Written out for the signature torch has had since 1.6 (it is entered every step); any other
    signature is bound generically."""
    device_type = session.device_type
    parameters = dict(inspect.signature(original.__init__).parameters)
    parameters.pop(next(iter(parameters)))  # self
    defaults = {name: parameter.default for name, parameter in parameters.items()}
    if list(defaults) == ["enabled", "dtype", "cache_enabled"]:
        # torch's own __init__, called directly: the amp family's wrapper (installed after this)
        # would only pass the target's device type through.
        init, cuda_default = real.__dict__["__init__"], defaults["dtype"]
        default = session.autocast_dtype(cuda_default)

        def autocast(enabled=defaults["enabled"], dtype=cuda_default, cache_enabled=defaults["cache_enabled"]):
            context = object.__new__(real)
            init(context, device_type, dtype=default if dtype is cuda_default else session.autocast_dtype(dtype),
                 enabled=enabled and session.autocast_allowed(), cache_enabled=cache_enabled)
            return context
        return autocast
    signature = inspect.Signature(list(parameters.values()))

    def autocast_bound(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        options = dict(bound.arguments)
        options["dtype"] = session.autocast_dtype(options.get("dtype"))
        options["enabled"] = options.get("enabled", True) and session.autocast_allowed()
        return real(device_type, **options)

    return autocast_bound


def raiser(session, verdict):
    from torchport.runtime import UnsupportedOnTarget

    message = f"{verdict.api} is not supported on target {session.target.name}"
    if verdict.note:
        message += f": {verdict.note}"

    def unsupported(*args, **kwargs):
        raise UnsupportedOnTarget(message)

    return unsupported


def _returner(session, value: str | None):
    """A function returning the verdict's value: a source expression (a literal, or one that uses
    DEVICE_TYPE), evaluated once here; a call of one of the target's functions, on every call."""
    if value is None:
        return lambda *args, **kwargs: None
    called = value.removesuffix("()")
    if called != value and called in session.target.definitions:  # (`host_memory_info()`: asked anew each call)
        function = session.evaluate(called)
        return lambda *args, **kwargs: function()
    result = session.evaluate(value)
    if isinstance(result, (dict, list, set)):  # a fresh container on every call
        return lambda *args, **kwargs: copy.copy(result)
    return lambda *args, **kwargs: result


def _is_dotted(source: str) -> bool:
    """Whether a replacement is a plain dotted name, not an expression such as
    `torch.get_device_module(DEVICE_TYPE).get_device_properties`."""
    return all(part.isidentifier() for part in source.split("."))


def _resolve(dotted: str):
    """The object a dotted name like "torch.cpu.synchronize" or "platform.processor" names."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                found = getattr(found, part)
        except AttributeError:
            return None
        return found
    return None
