"""The settings of a run that change its numbers, as `dump` records them and `compare` lists
where two runs differ."""

from __future__ import annotations

import os
import platform
import random

# Environment variables that change what kernels compute (determinism, TF32, threads, hashing),
# on CUDA and on the targets' runtimes.
NUMERIC_ENV = ("CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
               "CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED",
               "TORCH_DETERMINISTIC", "PYTORCH_ENABLE_MPS_FALLBACK", "ASCEND_LAUNCH_BLOCKING",
               "INF_NAN_MODE_ENABLE")


def fix_seeds(seed: int) -> str:
    """Seed torch, random and numpy (where installed) before the script runs; the note saying so
    (the script's own seeding, later, prevails)."""
    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        return f"torch and random seeded with {seed} before the script ran (its own seeds prevail)"
    numpy.random.seed(seed)
    return f"torch, random and numpy seeded with {seed} before the script ran (its own seeds prevail)"


def settings(target: str | None, script: str, argv: list[str], seeds: str) -> dict:
    import torch

    import torchport

    return {
        "script": script,
        "args": argv[1:],
        "target": target or "as written",
        "torch": torch.__version__,
        "torchport": torchport.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "default_dtype": str(torch.get_default_dtype()).replace("torch.", ""),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "threads": torch.get_num_threads(),
        "seeds": seeds,
        "env": {name: os.environ[name] for name in NUMERIC_ENV if name in os.environ},
    }
