"""The `torch.cuda` module: which of its APIs `torchport run` replaces.

Every public API of `torch.cuda` and `torch.cuda.amp` has a verdict per target (`Target.verdict`).
`run` replaces the callables among them, by their kind as the generated surfaces name it;
modules and plain values (`torch.cuda.has_magma`) are left alone: a module attribute read cannot
be intercepted cheaply. `analyze --mode third-party` reads the same kinds from the surface data
to say which of a library's torch.cuda uses `run` reaches.
"""

from __future__ import annotations

import inspect

from torchport.apis.amp import CUDA_AMP

DEVICE_MODULE = "torch.cuda"
MODULE_NAME = DEVICE_MODULE.rpartition(".")[2]  # `from torch import cuda`
# The Tensor and Module method that moves to CUDA (`x.cuda()`), beside the module `torch.cuda` that
# shares its name.
MOVE_METHOD = "cuda"
DEVICE_MOVES = ("to", MOVE_METHOD)  # the methods that put a tensor or a model on its device
MODULES = (DEVICE_MODULE, CUDA_AMP)  # the modules whose APIs have verdicts

PATCHED_KINDS = frozenset({"function", "class"})

# A device's properties, and the one that sizes kernel grids and persistent kernels (torchtitan,
# mamba, Liger, Triton launchers): CUDA's streaming multiprocessors. Each target names its own
# count (`Target.processor_count`).
PROPERTIES = f"{DEVICE_MODULE}.get_device_properties"
PROCESSOR_COUNT = "multi_processor_count"


def kind(obj: object) -> str:
    """"module", "class", "function" (any other callable) or "value", as the surfaces name them."""
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "value"


def is_patched(api_kind: str) -> bool:
    """Whether `run` replaces a torch.cuda API of this kind."""
    return api_kind in PATCHED_KINDS
