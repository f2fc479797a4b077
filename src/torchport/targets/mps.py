"""Apple silicon GPUs through torch.mps (surface read from torch 2.13). One device, no collectives."""

from torchport.targets.advice import common
from torchport.targets.base import Target
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.targets.verdict import same

TARGET = Target(
    name="mps",
    rank=3,
    advice=common(no_float64=True),
    auto=True,
    summary="Apple GPU (torch.mps): a single device; distributed code falls back to gloo",
    device_module="torch.mps",
    surface=names(TORCH_SURFACE, "torch.mps"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    device_type="mps",
    keeps_device_index=False,
    dist_backend='"gloo"',
    overrides={
        "torch.cuda.is_available": same("torch.cuda.is_available", "torch.backends.mps.is_available"),
        "torch.cuda.memory_allocated": same(
            "torch.cuda.memory_allocated", "torch.mps.current_allocated_memory"
        ),
    },
)
