"""Classes CUDA names after itself (`CUDAGraph`, `CUDAPluggableAllocator`), and their twins.

A device module that has such a class names it after its own device type: `torch.cuda.CUDAGraph`
is `torch.npu.NPUGraph`, `torch.xpu.XPUGraph`. `Target.verdict` calls a class `same` where the
target's surface has its twin.
"""

from __future__ import annotations

CUDA_PREFIX = "CUDA"


def twin(name: str, device_type: str) -> str | None:
    """The name of `name`'s twin on `device_type` (`NPUGraph` for `CUDAGraph` on "npu"); None for
    a name CUDA does not name after itself."""
    if not name.startswith(CUDA_PREFIX):
        return None
    return device_type.upper() + name[len(CUDA_PREFIX):]
