"""The run-time log of the stand-in's uses: under `torchport run` (or `import torchport.auto`) each
torch_npu name a script reaches gets one line per call site, as every redirected CUDA call does;
elsewhere, nothing. A name the stand-in lacks is an error that names it (and a log line)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from torchport.active_session import active
from torchport.apis.npu_ops import PACKAGE
from torchport.targets.verdict import Kind, Verdict


def note(verdict: Verdict, depth: int = 1) -> None:
    """Log `verdict` at the first frame outside torch and torchport above our caller's caller."""
    session = active()
    if session is not None:
        session.log.note_frame(verdict, sys._getframe(depth + 1))


def missing(qualified: str, depth: int = 1) -> AttributeError:
    """The error for a name of torch_npu the stand-in does not have (logged as unsupported)."""
    message = f"{qualified} has no stand-in in torchport; port the call by hand"
    note(Verdict(qualified, Kind.UNSUPPORTED, None, "not in torchport's stand-in torch_npu"), depth + 1)
    return AttributeError(message)


def outside_a_run(qualified: str) -> AttributeError:
    return AttributeError(f"{qualified}: torchport's stand-in {PACKAGE} answers only under `torchport run` "
                          "(or `import torchport.auto`), which maps it to the run's target")


def unlogged_miss(package_file: str, name: str) -> bool:
    """Whether a miss of `name` on a stand-in module is no use of torch_npu: a name Python and
    inspect probe modules for (`__path__`, `__wrapped__`)."""
    return name.startswith("__") and name.endswith("__")


def submodule(package: str, package_file: str, name: str):
    """The stand-in's submodule `name` of `package` (a module name of ours), imported under the
    name the script knows the package by (`torch_npu.contrib.transfer_to_npu`, so that its import
    is served and logged), or None where the stand-in has no such submodule. `from torch_npu.contrib
    import transfer_to_npu` asks the package for it before importing it, under our own name."""
    folder = Path(package_file).parent
    if not package_file.endswith("__init__.py") or not ((folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists()):
        return None
    ours = sys.modules[package]
    served = [alias for alias, module in list(sys.modules.items()) if module is ours and alias != package]
    return importlib.import_module(f"{(served or [package])[0]}.{name}")
