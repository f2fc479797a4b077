"""xformers.ops: memory_efficient_attention and its biases, SwiGLU, unbind."""

import torch

from torchport.apis.kernels_llm import XFORMERS
from torchport.compat._kernels_log import module_getattr
from torchport.compat.xformers.ops import fmha
from torchport.compat.xformers.ops.fmha import (  # noqa: F401  (xformers.ops exports them)
    AttentionBias,
    BlockDiagonalCausalMask,
    BlockDiagonalMask,
    LowerTriangularFromBottomRightMask,
    LowerTriangularMask,
    LowerTriangularMaskWithTensorBias,
    MemoryEfficientAttentionCutlassOp,
    MemoryEfficientAttentionFlashAttentionOp,
    memory_efficient_attention,
    memory_efficient_attention_forward,
)
from torchport.compat.xformers.ops.swiglu_op import SwiGLU, swiglu  # noqa: F401


def unbind(x, dim):
    return torch.unbind(x, dim)


__getattr__ = module_getattr(f"{XFORMERS}.ops", __name__)
