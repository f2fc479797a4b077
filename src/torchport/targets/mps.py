"""Apple silicon GPUs through torch.mps (surface read from torch 2.13). One device, no collectives."""

from torchport.targets.advice import common
from torchport.targets.base import Target
from torchport.targets.launch import Launch
from torchport.targets.kernels import Kernels
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.targets.verdict import same
from torchport.apis import kernel_paths

# element type -> why the device cannot hold it (the MPS framework has no 64-bit floats)
DTYPE_LIMITS = {
    "float64": "the MPS framework has no float64 (torch: \"Cannot convert a MPS Tensor to float64 "
    "dtype as the MPS framework doesn't support float64\"); use float32",
    "complex128": "the MPS framework has no float64, so no complex128; use complex64",
}

TARGET = Target(
    name="mps",
    kernel_paths=kernel_paths.MPS,
    rank=3,
    advice=common(dtype_limits=DTYPE_LIMITS, single_device=True),
    auto=True,
    summary="Apple GPU (torch.mps): a single device; distributed code falls back to gloo",
    device_module="torch.mps",
    surface=names(TORCH_SURFACE, "torch.mps"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    device_type="mps",
    launch=Launch(count="torch.mps.device_count()"),
    keeps_device_index=False,
    dist_backend='"gloo"',
    data_parallel=None,  # torch's DataParallel only wraps the module here (device_ids empty)
    overrides={
        "torch.cuda.is_available": same("torch.cuda.is_available", "torch.backends.mps.is_available"),
        "torch.cuda.memory_allocated": same(
            "torch.cuda.memory_allocated", "torch.mps.current_allocated_memory"
        ),
    },
    kernels=Kernels("MPS", without_kernel="it fails, or runs on the CPU with PYTORCH_ENABLE_MPS_FALLBACK=1 (slow)"),
)
