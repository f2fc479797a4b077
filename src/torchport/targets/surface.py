"""The committed data in targets/data, read without importing torch: the API surfaces (generated
by tools/gen_surface.py), the kernel lists (tools/gen_kernels.py) and torch's own namespaces with
the aten operator each API is (tools/gen_api.py). The one reader of that folder."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

TORCH_SURFACE = "torch-2.13.0.json"
NPU_SURFACE = "torch_npu-2.14.0.json"
TORCH_KERNELS = "kernels-torch-2.13.0.json"  # the kernels torch registers, by dispatch key
TORCH_API = "torch-api-2.13.0.json"  # torch's public namespaces, and the operator each API is


@lru_cache(maxsize=None)
def load(filename: str, package: str = __package__) -> dict:
    """A file of `package`'s data/ folder: torchport's own, or that of the package a target comes from."""
    return json.loads(resources.files(package).joinpath("data", filename).read_text(encoding="utf-8"))


def names(filename: str, module: str, package: str = __package__) -> frozenset[str]:
    """Public names of `module` in the surface file `filename` (empty if the module is absent)."""
    return frozenset(load(filename, package)["modules"].get(module, {}))


def version(filename: str, package: str = __package__) -> str:
    return load(filename, package)["version"]


def cuda_apis() -> list[str]:
    """Every public `torch.cuda` and `torch.cuda.amp` API, qualified, from torch's own `__all__`,
    the `torch.cuda.nvtx` annotations and the memory snapshots (`torch.cuda.memory._snapshot`)."""
    from torchport.targets import fallbacks

    from torchport.apis.cuda_module import MODULES
    from torchport.apis.memory import MEMORY_HISTORY_APIS

    apis = [f"{module}.{n}" for module in MODULES for n in sorted(names(TORCH_SURFACE, module))]
    apis += [f"{fallbacks.NVTX}{n}" for n in (*fallbacks.NVTX_ACTIONS, *fallbacks.NVTX_CONTEXTS)]
    return apis + list(MEMORY_HISTORY_APIS)
