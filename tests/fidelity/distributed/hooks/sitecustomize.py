"""Loaded at start-up by every Python process with this directory on PYTHONPATH (the harness's
runs): with PROJECT_SAVES_LOG set, each `torch.save` to a path appends "<RANK or -> <pid> <absolute
path>" to that file, so that a run shows which process wrote which checkpoint (all ranks share one
working directory). torch is not imported for it: a hook waits for `torch.serialization`. Then it
runs the sitecustomize this one hides, as tests/cpu_bf16's does (put this directory after that
one on PYTHONPATH).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

LOG = os.environ.get("PROJECT_SAVES_LOG")
HERE = os.path.dirname(os.path.abspath(__file__))


def _logged(save):
    def save_logged(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)):
            with open(LOG, "a") as log:
                log.write(f"{os.environ.get('RANK', '-')} {os.getpid()} {os.path.abspath(f)}\n")
        return save(obj, f, *args, **kwargs)

    save_logged.__wrapped__ = save
    return save_logged


class _SerializationHook(importlib.abc.MetaPathFinder):
    """Wraps `torch.serialization.save` as soon as the module has executed (before torch's
    `from torch.serialization import save` binds `torch.save`)."""

    def find_spec(self, name, path, target=None):
        if name != "torch.serialization":
            return None
        others = [f for f in sys.meta_path if f is not self and hasattr(f, "find_spec")]
        spec = next((s for s in (f.find_spec(name, path, target) for f in others) if s is not None), None)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            module.save = _logged(module.save)

        spec.loader.exec_module = exec_module
        return spec


if LOG:
    sys.meta_path.insert(0, _SerializationHook())


def _run_the_hidden_sitecustomize() -> None:
    """One further down sys.path than this one (this directory goes after tests/cpu_bf16, whose
    sitecustomize runs this one: each looks only past itself, so neither runs the other twice)."""
    paths = [os.path.abspath(p or ".") for p in sys.path]
    rest = paths[paths.index(HERE) + 1:] if HERE in paths else []
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_run_the_hidden_sitecustomize()
