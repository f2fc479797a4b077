"""Intel GPUs through upstream torch.xpu (surface read from torch 2.13)."""

from torchport.targets.base import Target
from torchport.targets.fallbacks import CAPABILITY, NO_CAPABILITY
from torchport.targets.launch import Launch
from torchport.targets.kernels import Kernels
from torchport.targets.surface import TORCH_SURFACE, names, version
from torchport.targets.verdict import noop

TARGET = Target(
    name="xpu",
    rank=2,
    auto=True,
    summary="Intel GPU (torch.xpu): xccl, ZE_AFFINITY_MASK",
    device_module="torch.xpu",
    surface=names(TORCH_SURFACE, "torch.xpu"),
    surface_version=f"torch {version(TORCH_SURFACE)}",
    memory_history="torch.xpu.memory",
    # XPU properties have no multi_processor_count: torch's own inductor reads gpu_subslice_count in its
    # place (torch/_inductor/runtime/hints.py, DeviceProperties.create)
    processor_count="gpu_subslice_count",
    lightning_built_in=False,  # (Lightning's own accelerators: cpu, cuda, mps, tpu)
    device_type="xpu",
    tensor_method="xpu",
    dist_backend='"xccl"',
    visible_devices_env="ZE_AFFINITY_MASK",
    launch=Launch(count="torch.xpu.device_count()"),
    profiler_activity="XPU",
    overrides={
        f"torch.cuda.{CAPABILITY}": noop(f"torch.cuda.{CAPABILITY}", "torch.xpu's answers a dict of the device's "
                                         f"properties, not CUDA's (major, minor): {NO_CAPABILITY}, CUDA's pre-Ampere path",
                                         NO_CAPABILITY),
    },
    # torch 2.13 names only a few XPU kernels in native_functions.yaml: intel/torch-xpu-ops registers the rest
    kernels=Kernels("XPU", listed_elsewhere="intel/torch-xpu-ops"),
)
