"""One application of the runtime patches: the target, the patch book, the call log."""

from __future__ import annotations

import atexit
import importlib
import os
import pkgutil
import sys
from dataclasses import dataclass, field
from types import ModuleType

from torchport.runtime import callers, choose
from torchport.runtime.calllog import CallLog
from torchport.runtime.devices import DeviceMapper, Memo
from torchport.runtime.patchbook import PatchBook
from torchport.targets.expressions import evaluate


def families() -> list[ModuleType]:
    """The patch families, each a module `patch_<concern>.py` of this package with `install(session)`,
    found there (a new one is one new file) and in their `ORDER`. Order matters only in that
    `patch_devices` captures the original torch.device before anything else runs, and
    `patch_compilers` (which tells TorchScript what each replacement stands for) reads every
    replacement made before it."""
    package = sys.modules[__package__]
    found = [
        importlib.import_module(f"{__package__}.{module.name}")
        for module in pkgutil.iter_modules(package.__path__) if module.name.startswith("patch_")
    ]
    return sorted(found, key=lambda family: family.ORDER)


@dataclass
class Session:
    requested: str  # what the user asked for ("auto", "cpu", ...)
    target: object  # torchport.targets.Target
    device_type: str  # what the target means on this machine
    log: CallLog
    honest: frozenset[str]
    log_request: str | None = None
    honest_request: object = None
    book: PatchBook = field(default_factory=PatchBook)
    mapper: DeviceMapper | None = None
    sorter: callers.CallerSorter | None = None  # honest callers versus the script's
    env_changes: dict = field(default_factory=dict)  # name -> previous value (None: was unset)
    amp: object = None  # run --amp's AutoMixedPrecision, once installed (runtime/amp_training.py)
    _verdicts: dict = field(default_factory=dict)

    @classmethod
    def start(cls, requested: str, log_path: str | None, honest_to=None) -> "Session":
        import torch

        target, device_type = choose.resolve(requested)
        described = (f"# torchport run: target {target.name} (device type {device_type}), "
                     f"torch {torch.__version__}")
        command = " ".join(sys.argv) or "-"

        def header(pid: int) -> str:  # a forked child writes its own pid
            return f"{described}, pid {pid}, {command}"

        session = cls(
            requested=requested,
            target=target,
            device_type=device_type,
            log=CallLog(log_path, header),  # which process announces: CallLog.close
            honest=callers.honest_packages(honest_to),
            log_request=log_path,
            honest_request=honest_to,
        )
        session.sorter = callers.CallerSorter(session.honest)
        session.mapper = DeviceMapper(device_type, target.keeps_device_index, torch.device)
        session.install()
        return session

    def install(self) -> None:
        try:
            for family in families():
                family.install(self)
        except BaseException:
            self.book.restore_all()
            self.restore_env()
            raise
        atexit.register(self.log.close)

    def stop(self) -> None:
        atexit.unregister(self.log.close)
        self.book.restore_all()
        self.restore_env()
        self.log.close()

    def matches(self, requested: str, log_path: str | None, honest_to) -> bool:
        return (requested in (self.requested, self.target.name) and log_path == self.log_request
                and callers.honest_packages(honest_to) == self.honest)

    # helpers for the patch families -------------------------------------------------------

    def evaluate(self, expression: str):
        """One of the target's source expressions, evaluated here; one of its definitions by name
        (a class such as HostStream) once a session, so that every API it stands for gives the same class."""
        definitions = getattr(self.target, "definitions", None) or {}
        key = ("definition", expression)
        if expression in definitions and key in self._verdicts:
            return self._verdicts[key]
        value = evaluate(expression, self.device_type, definitions)
        if expression in definitions:
            self._verdicts[key] = value
        return value

    def autocast_allowed(self) -> bool:
        """Whether autocast may stay on here (the target's `autocast_enabled`, evaluated once):
        False on a CPU without native bfloat16, where it would run slower than float32."""
        if "autocast_enabled" not in self._verdicts:
            expression = getattr(self.target, "autocast_enabled", None)
            self._verdicts["autocast_enabled"] = bool(self.evaluate(expression)) if expression else True
        return self._verdicts["autocast_enabled"]

    def device_verdicts(self, api: str, keyword: str | None = None) -> Memo:
        """CUDA device value -> the log's verdict for mapping it in `api` (its `keyword=`), for
        wrappers that have already checked the value's kind (see `DeviceMapper.mapped`)."""
        mapped = self.mapper.mapped
        return Memo(lambda before: self.mapper.verdict(api, before, mapped[before], "", keyword))

    def note_device(self, api: str, before, after, depth: int = 1, note: str = "", keyword=None) -> None:
        """Log a device conversion made for the caller `depth` levels above our caller."""
        key = (api, keyword, type(before), before)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self.mapper.verdict(api, before, after, note, keyword)
        self.log.note(verdict, depth + 1)

    def autocast_dtype(self, dtype):
        """What a CUDA autocast dtype becomes here (None is CUDA's default, float16): the target's
        `float16_autocast` expression, evaluated once."""
        import torch

        if dtype is None:
            dtype = torch.float16
        if dtype is not torch.float16:
            return dtype
        if "float16" not in self._verdicts:
            expression = getattr(self.target, "float16_autocast", None)
            self._verdicts["float16"] = self.evaluate(expression) if expression else torch.float16
        return self._verdicts["float16"]

    def set_env(self, name: str, value: str) -> None:
        if name not in self.env_changes:
            self.env_changes[name] = os.environ.get(name)
        os.environ[name] = value

    def restore_env(self) -> None:
        for name, previous in self.env_changes.items():
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous
        self.env_changes.clear()
