"""The run-time log of the LLM-era stand-ins (flash_attn, xformers, bitsandbytes, rotary_emb):
under `torchport run` (or `import torchport.auto`) each call site of a served function or class
gets one line, as every redirected CUDA call does; elsewhere, nothing. A name a stand-in lacks is
an AttributeError that says what to do (apis/kernels_llm.py), logged as unsupported."""

from __future__ import annotations

import importlib
import importlib.util
import sys

from torchport.active_session import active
from torchport.apis.kernels_llm import no_stand_in_advice
from torchport.targets.verdict import Kind, Verdict


def adapted(api: str, replacement: str, note: str, depth: int = 1) -> None:
    """Log a use of `api` made by our caller's caller (`depth` more frames up)."""
    session = active()
    if session is not None:
        session.log.note_frame(Verdict(api, Kind.ADAPTED, replacement, note), sys._getframe(depth + 1))


def missing(qualified: str, depth: int = 1) -> AttributeError:
    """The error for a name of a CUDA-only package that the stand-in does not have."""
    advice = no_stand_in_advice(qualified) or "port the call by hand"
    session = active()
    if session is not None:
        session.log.note_frame(Verdict(qualified, Kind.UNSUPPORTED, None, advice), sys._getframe(depth + 1))
    return AttributeError(f"{qualified} has no stand-in in torchport: {advice}")


def module_getattr(served: str, module: str):
    """A `__getattr__` for the stand-in module `module` (ours), served as `served`: a dunder probe
    is a plain AttributeError; a submodule the stand-in has is imported under the served name
    (`from flash_attn.modules import mha` asks the package before importing it); any other name
    is the error above."""

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if _is_package(module) and importlib.util.find_spec(f"{module}.{name}") is not None:
            known_as = served if sys.modules.get(served) is sys.modules[module] else module  # (served: logged)
            return importlib.import_module(f"{known_as}.{name}")
        raise missing(f"{served}.{name}", depth=2)

    return __getattr__


def _is_package(module: str) -> bool:
    return hasattr(sys.modules.get(module), "__path__")
