"""The conversion's report codes, with the few words the terminal summary prints for each."""

from __future__ import annotations

from torchport.findings import Code, titles

IMPORTS = Code("TP401", "from the NPU: torch_npu imports removed (transfer_to_npu's file is CUDA code)")
DEVICE_API = Code("TP402", "from the NPU: torch.npu / torch_npu.npu APIs -> torch.cuda")
METHODS = Code("TP403", "from the NPU: x.npu() and x.is_npu -> x.cuda() and x.is_cuda")
DEVICES = Code("TP404", "from the NPU: device strings -> CUDA's")
BACKEND = Code("TP405", "from the NPU: hccl -> nccl")
VISIBLE = Code("TP406", "from the NPU: ASCEND_RT_VISIBLE_DEVICES -> CUDA_VISIBLE_DEVICES")
TUNING = Code("TP407", "from the NPU: NPU-only tuning dropped")
OPTIMIZERS = Code("TP408", "from the NPU: NpuFused optimizers -> torch.optim or torchport.optim")
KERNELS = Code("TP409", "from the NPU: torch_npu.npu_* kernels -> their torch computation")
PROFILER = Code("TP410", "from the NPU: torch_npu.profiler -> torch.profiler")
LABELS = Code("TP411", "from the NPU: int32 class labels -> int64 where a loss reads them")
CONTIGUOUS = Code("TP412", "from the NPU: a view of a comparison's result -> reshape (contiguous on the NPU alone)")
NOTE = Code("TP400", "from the NPU: uses left as they were")

CODES = titles((IMPORTS, DEVICE_API, METHODS, DEVICES, BACKEND, VISIBLE, TUNING, OPTIMIZERS, KERNELS, PROFILER, LABELS,
                CONTIGUOUS, NOTE))
