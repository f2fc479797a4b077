"""A script written for the NPU, run where no torch_npu is installed (`torchport run --target cpu`,
`import torchport.auto`, TORCHPORT_TARGET): the stand-in torchport.compat.torch_npu is served as
`torch_npu` (and its `npu` as `torch.npu`, which `import torch_npu` installs on torch as the
real one does), and the NPU's dialect counts as CUDA's: "npu:0", torch.device("npu", 1),
`x.npu()`, torch.autocast("npu"), "hccl" and ASCEND_RT_VISIBLE_DEVICES map to the target as their
CUDA twins do (runtime/devices.py's dialects, read by the device, amp, distributed and memory
families, installed after this one).

`torch.npu.X` resolves, on first use, to the run's redirection of the torch.cuda API that the npu
target renames to X (the npu target's verdicts read the other way: `torch.cuda.CUDAGraph ->
torch.npu.NPUGraph` makes torch.npu.NPUGraph CUDAGraph's redirection), logged as torch.npu.X.
Names only the NPU has (set_compile_mode, set_option, config.allow_internal_format) are logged
no-ops; a name torch_npu does not have is an AttributeError that names it. Libraries that probe
the hardware (`callers.HONEST_BY_DEFAULT`) find no torch_npu to import, and torch.npu tells them
no NPU is there.

Nothing is served on the NPU target itself, nor where a real torch_npu is importable.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from functools import lru_cache

from torchport.apis.amp import STATE_QUERIES
from torchport.runtime import npu_labels, npu_profiler_keyword
from torchport.runtime.callers import top_package
from torchport.runtime.devices import dialect_of
from torchport.runtime.patch_cuda_module import redirection
from torchport.runtime.patchbook import ABSENT
from torchport.runtime.stand_in import StandInFinder, found_elsewhere
from torchport.targets.npu import TARGET as NPU
from torchport.targets.surface import NPU_SURFACE, cuda_apis, load
from torchport.targets.verdict import Kind, Verdict

ORDER = 5  # first: patch_devices, patch_amp, patch_distributed and patch_memory read the dialect it adds
PACKAGE = NPU.setup_import  # torch_npu
DEVICE_MODULE = NPU.device_module  # torch.npu
COMPAT = f"torchport.compat.{PACKAGE}"
ATTRIBUTE = DEVICE_MODULE.rpartition(".")[2]  # torch's attribute for it
PACKAGE_DEVICE_MODULE = f"{PACKAGE}.{ATTRIBUTE}"  # torch_npu.npu, which torch.npu is
TRANSFER = f"{PACKAGE}.contrib.transfer_to_{NPU.device_type}"
NO_DEVICE = {"is_available": False, "device_count": 0}  # what a hardware probe learns of torch.npu here


def serves(session) -> bool:
    """Whether this run stands in for torch_npu: not on the NPU, nor where a real one is importable."""
    if session.device_type == NPU.device_type:
        return False
    return PACKAGE not in sys.modules and not found_elsewhere(PACKAGE)  # (another session's stand-in is none)


def install(session) -> None:
    if not serves(session):
        return
    import torchport.compat.torch_npu as stand_in

    session.mapper.add_dialect(dialect_of(NPU))
    npu_labels.install(session)
    npu_profiler_keyword.install(session)
    for module in (stand_in.npu, stand_in.npu.amp, stand_in.npu.utils):
        qualified = DEVICE_MODULE + module.__name__[len(stand_in.npu.__name__):]
        session.book.replace(module, "__getattr__", _resolver(session, module, qualified))
    why = (f"{PACKAGE} is not installed: its API on the {session.target.name} target "
           "(the run's torch.cuda redirections, torchport.optim, torch.profiler)")
    StandInFinder(session, {PACKAGE: COMPAT, DEVICE_MODULE: stand_in.npu.__name__}, why,
                  verdict=_import_verdict(session), on_serve=_on_serve(session, stand_in),
                  decline_honest=True).install()
    _serve_builtin_device_module(session)


def _serve_builtin_device_module(session) -> None:
    """torch.npu read by a script that never imports torch_npu (torch 1.5's Ascend build had it
    built in): the stand-in is imported then, as `import torch_npu` would have. A library that
    probes the hardware (`hasattr(torch, "npu")`) still finds none."""
    import torch

    original = vars(torch).get("__getattr__")
    honest, note = session.honest, session.log.note_frame
    verdict = Verdict(DEVICE_MODULE, Kind.ADAPTED, COMPAT,
                      f"read without import {PACKAGE} (torch 1.5's Ascend build had it built in): {PACKAGE} imported then")

    def __getattr__(name: str):
        frame = sys._getframe(1)
        if name == ATTRIBUTE and top_package(frame) not in honest:
            note(verdict, frame)
            importlib.import_module(PACKAGE)  # (served: sets torch.npu, as torch_npu does)
            found = vars(torch).get(ATTRIBUTE)
            if found is not None:
                return found
        if original is None:
            raise AttributeError(f"module 'torch' has no attribute {name!r}")
        return original(name)

    session.book.replace(torch, "__getattr__", __getattr__)


def _import_verdict(session):
    transfer = Verdict(f"import {TRANSFER}", Kind.NOOP, None,
                       f"a file with it is CUDA code: run redirects its CUDA calls to {session.target.name} already")

    def verdict(fullname: str, replacement: str):
        return transfer if fullname == TRANSFER else None

    return verdict


def _on_serve(session, stand_in):
    import torch

    def served(fullname: str, module) -> None:
        if fullname == PACKAGE and ATTRIBUTE not in vars(torch):
            session.book.replace(torch, ATTRIBUTE, stand_in.npu)  # as torch_npu does

    return served


def _resolver(session, module, qualified: str):
    """The module's `__getattr__` for the session: a name is resolved once, then kept on the
    module (until undo)."""

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _resolved(session, qualified, name)
        session.book.replace(module, name, value)
        return value

    return __getattr__


def _resolved(session, qualified: str, name: str):
    from torchport.compat.torch_npu import _log

    full = f"{qualified}.{name}"
    twins = cuda_twins()
    api = twins.get(full) or twins.get(f"{DEVICE_MODULE}.{name}")  # (torch.npu.utils.X is torch.npu.X)
    if api is not None:
        value = _redirected(session, api, full, name)
        if value is not None:
            return value
    kind = npu_kind(qualified, name)
    if kind is None:
        raise _log.missing(full)
    if kind == "module":
        return _namespace(session, full)
    if kind == "value":
        return Settings(session, full)
    if name in STATE_QUERIES:
        return _state_query(session, full, name)
    return _noop(session, full)


@lru_cache(maxsize=None)
def cuda_twins() -> dict[str, str]:
    """torch.npu name -> the torch.cuda API that the npu target renames to it, one for one."""
    twins = {}
    for api in cuda_apis():
        verdict = NPU.verdict(api)
        renamed = verdict.kind is Kind.SAME and (verdict.replacement or "").startswith(f"{DEVICE_MODULE}.")
        if renamed and not (verdict.drop_args or verdict.device_first or verdict.index_first):
            twins.setdefault(verdict.replacement, api)
    return twins


def npu_kind(qualified: str, name: str) -> str | None:
    """The kind torch_npu's surface gives `qualified.name` ("function", "module", "value", ...),
    or None where torch_npu has no such name."""
    modules = load(NPU_SURFACE)["modules"]
    # (its torch_npu spelling; then torch.npu's own names, which its submodules are read for)
    for module in (qualified, PACKAGE_DEVICE_MODULE + qualified[len(DEVICE_MODULE):], DEVICE_MODULE):
        entry = modules.get(module, {}).get(name)
        if entry is not None:
            return entry.get("kind")
    return None


def _redirected(session, api: str, full: str, name: str):
    owner_name, cuda_name = api.rsplit(".", 1)
    owner = importlib.import_module(owner_name)
    original = _original(session, owner, cuda_name)
    answer = NO_DEVICE.get(name)
    honest = (lambda *args, **kwargs: answer) if name in NO_DEVICE else None
    replacement = redirection(session, api, original, shown_as=full, honest=honest)
    if replacement is None and inspect.ismodule(original):
        return _namespace(session, full)  # torch.npu.memory: its names are torch.npu's
    return replacement


def _original(session, owner, name: str):
    """`owner.name` as it was before the session patched it."""
    for patched, patched_name, original in session.book.patched():
        if patched is owner and patched_name == name:
            return None if original is ABSENT else original
    return getattr(owner, name, None)


def _namespace(session, qualified: str) -> types.ModuleType:
    module = types.ModuleType(qualified)
    module.__getattr__ = _resolver(session, module, qualified)
    return module


def _noop(session, full: str):
    verdict = Verdict(full, Kind.NOOP, None, f"NPU-only: nothing to do on {session.target.name} (returns None)")
    note = session.log.note_frame

    def noop(*args, **kwargs):
        note(verdict, sys._getframe(1))

    noop.__name__ = noop.__qualname__ = full.rpartition(".")[2]
    return noop


def _state_query(session, full: str, name: str):
    """torch.npu.is_autocast_enabled() -> torch.is_autocast_enabled(<the target's device type>)."""
    import torch

    function, device_type = getattr(torch, name), session.device_type
    verdict = Verdict(full, Kind.SAME, f"torch.{name}({device_type!r})")
    note = session.log.note_frame

    def query(*args, **kwargs):
        note(verdict, sys._getframe(1))
        return function(device_type, *args, **kwargs)

    return query


class Settings:
    """torch.npu.config, .matmul, .conv: the NPU's switches (`allow_internal_format`,
    `allow_hf32`). Setting one is a logged no-op; reading one gives what was set (None before)."""

    def __init__(self, session, qualified: str) -> None:
        vars(self).update(_session=session, _qualified=qualified, _values={})

    def __setattr__(self, name: str, value) -> None:
        session = self._session
        verdict = Verdict(f"{self._qualified}.{name}", Kind.NOOP, None,
                          f"NPU-only setting: nothing to set on {session.target.name}")
        session.log.note_frame(verdict, sys._getframe(1))
        self._values[name] = value

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)
