"""xformers.ops: memory_efficient_attention and its biases, SwiGLU, and the indexing helpers
(unbind, index_select_cat, scaled_index_add) on torch."""

import torch

from torchport.apis.kernels_llm import XFORMERS
from torchport.compat import _kernels_log
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


def index_select_cat(sources, indices):
    """source[index] of each pair, flattened, concatenated into one vector."""
    _kernels_log.adapted(f"{XFORMERS}.ops.index_select_cat", "torch.cat", "index_select and cat, unfused")
    return torch.cat([source[index].flatten() for source, index in zip(sources, indices)])


def scaled_index_add(input, index, source, scaling=None, alpha=1.0):
    """input with alpha * source (times scaling, over the last dimension) added at rows `index`."""
    _kernels_log.adapted(f"{XFORMERS}.ops.scaled_index_add", "torch.Tensor.index_add", "unfused")
    return input.index_add(0, index, source if scaling is None else source * scaling, alpha=alpha)


__getattr__ = module_getattr(f"{XFORMERS}.ops", __name__)
