"""The conversion's report codes, with the few words the terminal summary prints for each."""

from __future__ import annotations

CODES = {
    "TP401": "from the NPU: torch_npu imports removed (transfer_to_npu's file is CUDA code)",
    "TP402": "from the NPU: torch.npu / torch_npu.npu APIs -> torch.cuda",
    "TP403": "from the NPU: x.npu() and x.is_npu -> x.cuda() and x.is_cuda",
    "TP404": "from the NPU: device strings -> CUDA's",
    "TP405": "from the NPU: hccl -> nccl",
    "TP406": "from the NPU: ASCEND_RT_VISIBLE_DEVICES -> CUDA_VISIBLE_DEVICES",
    "TP407": "from the NPU: NPU-only tuning dropped",
    "TP408": "from the NPU: NpuFused optimizers -> torch.optim or torchport.optim",
    "TP409": "from the NPU: torch_npu.npu_* kernels -> their torch computation",
    "TP410": "from the NPU: torch_npu.profiler -> torch.profiler",
    "TP411": "from the NPU: int32 class labels -> int64 where a loss reads them",
    "TP412": "from the NPU: a view of a comparison's result -> reshape (contiguous on the NPU alone)",
    "TP400": "from the NPU: uses left as they were",
}
IMPORTS, DEVICE_API, METHODS, DEVICES, BACKEND, VISIBLE, TUNING, OPTIMIZERS, KERNELS, PROFILER = (
    f"TP4{n:02d}" for n in range(1, 11))
LABELS = "TP411"
CONTIGUOUS = "TP412"
NOTE = "TP400"
