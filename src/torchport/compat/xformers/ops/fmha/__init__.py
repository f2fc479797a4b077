"""xformers.ops.fmha: memory_efficient_attention on F.scaled_dot_product_attention.

Tensors are (B, M, H, K) (or (B, M, G, H, K) with G key/value groups); attn_bias is None, a tensor
added to the scores (broadcast to (B, H, Mq, Mk)), or one of attn_bias' classes. `op` is accepted
and ignored (it picks among xformers' CUDA kernels); `p` is the dropout probability, applied
whatever the module's mode, as xformers does."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import SDPA, XFORMERS_ATTENTION
from torchport.compat import _kernels_log
from torchport.compat._attention import attend
from torchport.compat._kernels_log import module_getattr
from torchport.compat.xformers.ops.fmha import attn_bias  # noqa: F401  (its submodule)
from torchport.compat.xformers.ops.fmha.attn_bias import (  # noqa: F401  (fmha exports them)
    AttentionBias,
    BlockDiagonalCausalMask,
    BlockDiagonalMask,
    LowerTriangularFromBottomRightMask,
    LowerTriangularMask,
    LowerTriangularMaskWithTensorBias,
)

# xformers' kernel choices (`op=`): accepted, meaningless here.
MemoryEfficientAttentionCutlassOp = MemoryEfficientAttentionFlashAttentionOp = None


def memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None, *, op=None, output_dtype=None):
    _kernels_log.adapted(XFORMERS_ATTENTION, SDPA, "transposed to (B, H, M, K); LowerTriangularMask aligned top-left")
    return _attention(query, key, value, attn_bias, p, scale, output_dtype)


def memory_efficient_attention_forward(query, key, value, attn_bias=None, p=0.0, scale=None, *, op=None,
                                       output_dtype=None):
    _kernels_log.adapted(f"{XFORMERS_ATTENTION}_forward", SDPA, "as memory_efficient_attention")
    return _attention(query, key, value, attn_bias, p, scale, output_dtype)


def _attention(query, key, value, bias, p, scale, output_dtype):
    if query.dim() == 5:  # (B, M, G, H, K): groups sharing keys, folded into the heads
        batch, length, groups, heads, _ = query.shape
        key, value = (t.expand(-1, -1, -1, heads, -1).flatten(2, 3) for t in (key, value))
        out = _attention(query.flatten(2, 3), key, value, bias, p, scale, output_dtype)
        return out.unflatten(2, (groups, heads))
    if isinstance(bias, BlockDiagonalMask):
        out = _block_diagonal(query, key, value, bias, p, scale)
    else:
        out = _dense(query, key, value, bias, p, scale)
    return out if output_dtype is None else out.to(output_dtype)


def _dense(query, key, value, bias, p, scale):
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    if bias is None or torch.is_tensor(bias):
        return attend(q, k, v, bias=bias, dropout_p=p, scale=scale).transpose(1, 2)
    if not isinstance(bias, AttentionBias):
        raise NotImplementedError(f"{XFORMERS_ATTENTION}: attn_bias {type(bias).__name__} has no stand-in in "
                                  "torchport (None, a tensor, LowerTriangularMask and BlockDiagonalMask have)")
    return attend(q, k, v, causal=bias.causal, align=bias.align, bias=bias.tensor, dropout_p=p,
                  scale=scale).transpose(1, 2)


def _block_diagonal(query, key, value, bias, p, scale):
    """Each packed sequence attends within itself (its causal mask top-left, as xformers')."""
    pieces = []
    for (q0, q1), (k0, k1) in zip(bias.q_seqinfo, bias.k_seqinfo):
        q, k, v = (t.transpose(1, 2) for t in (query[:, q0:q1], key[:, k0:k1], value[:, k0:k1]))
        pieces.append(attend(q, k, v, causal=bias.causal, dropout_p=p, scale=scale).transpose(1, 2))
    return torch.cat(pieces, dim=1)


__getattr__ = module_getattr("xformers.ops.fmha", __name__)
