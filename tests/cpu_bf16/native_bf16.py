"""Make this process (and, through sitecustomize.py, every Python process it starts) report a CPU
with or without native bfloat16, whatever CPU it runs on.

Whether autocast stays on for the CPU depends on `torch.cpu.get_capabilities()` (targets/cpu.py,
CPU_BF16). A test must not read the host's answer: CI runs on other CPUs. `force(native)` wraps
get_capabilities so that the bfloat16 flags read `native`; torch is not imported for it (a hook
waits for `torch.cpu` to be imported, so processes that never import torch still do not).

    SIMULATE_NATIVE_BF16=0|1 PYTHONPATH=tests/cpu_bf16 python script.py
"""

from __future__ import annotations

import functools
import importlib.abc
import os
import sys

ENV = "SIMULATE_NATIVE_BF16"
DIRECTORY = os.path.dirname(os.path.abspath(__file__))


def native_flags() -> tuple[str, ...]:
    """The flags whose truth means native bfloat16: the cpu target's own list."""
    from torchport.targets.cpu import NATIVE_BF16_FLAGS

    return NATIVE_BF16_FLAGS


def forced(get_capabilities, native: bool):
    """get_capabilities with the native-bfloat16 flags all False, or with AVX512-BF16 (as a
    Cooper Lake / Sapphire Rapids CPU reports it)."""
    original = getattr(get_capabilities, "__wrapped__", get_capabilities)

    @functools.wraps(original)
    def get_capabilities_forced():
        capabilities = dict(original())
        if native:
            capabilities["avx512_bf16"] = True
        else:
            capabilities.update(dict.fromkeys(native_flags(), False))
        return capabilities

    get_capabilities_forced.native_bf16 = native
    return get_capabilities_forced


def _patch(module, native: bool) -> None:
    module.get_capabilities = forced(module.get_capabilities, native)


class _TorchCpuHook(importlib.abc.MetaPathFinder):
    """Patches `torch.cpu` as soon as `import torch` has executed it (before torch's own
    `torch.backends` entry points, torchport's among them, run)."""

    def __init__(self, native: bool):
        self.native = native

    def find_spec(self, name, path, target=None):
        if name != "torch.cpu":
            return None
        others = [f for f in sys.meta_path if f is not self and hasattr(f, "find_spec")]
        spec = next((s for s in (f.find_spec(name, path, target) for f in others) if s is not None), None)
        if spec is None or spec.loader is None:
            return spec
        execute, native = spec.loader.exec_module, self.native

        def exec_module(module):
            execute(module)
            _patch(module, native)

        spec.loader.exec_module = exec_module
        return spec


def force(native: bool) -> None:
    """From now on, this process's torch reports native bfloat16 as `native`."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TorchCpuHook)]
    if "torch.cpu" in sys.modules:
        _patch(sys.modules["torch.cpu"], native)
    else:
        sys.meta_path.insert(0, _TorchCpuHook(native))


def requested() -> bool | None:
    """What the environment asks for: True, False, or None (the host's own answer)."""
    value = os.environ.get(ENV, "").strip()
    if value not in ("", "0", "1"):
        raise SystemExit(f"{ENV}={value}: expected 0 or 1")
    return None if value == "" else value == "1"


def environment(native: bool, env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with what makes a child process report `native`."""
    env = dict(os.environ if env is None else env)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != DIRECTORY]
    env["PYTHONPATH"] = os.pathsep.join([DIRECTORY, *paths])
    env[ENV] = "1" if native else "0"
    return env
