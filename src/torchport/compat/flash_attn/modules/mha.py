"""flash_attn.modules.mha's attention modules on the stand-in's attention (F.scaled_dot_product_attention).
MHA itself (projections, rotary, cross attention in one module) has no stand-in: an AttributeError
says what to do."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr
from torchport.compat.flash_attn.flash_attn_interface import _dense, _varlen

MODULE = f"{FLASH_ATTN}.modules.mha"


class _FlashAttention(torch.nn.Module):
    """What FlashSelfAttention and FlashCrossAttention keep of their arguments; the construction
    is logged as `name`'s."""

    def __init__(self, name, *, causal, softmax_scale, attention_dropout, window_size, alibi_slopes, deterministic):
        super().__init__()
        # (depth=2: the subclass's __init__ stands between this one and the line that built it)
        _kernels_log.adapted(f"{MODULE}.{name}", "torch.nn.functional.scaled_dot_product_attention",
                             "flash-attn's semantics (bottom-right causal mask, windows, varlen)", depth=2)
        self.causal = causal
        self.softmax_scale = softmax_scale
        self.drop = torch.nn.Dropout(attention_dropout)
        self.register_buffer("alibi_slopes", alibi_slopes, persistent=False)
        self.window_size = window_size
        self.deterministic = deterministic


class FlashSelfAttention(_FlashAttention):
    """softmax(Q K^T * softmax_scale) V on packed qkv: (B, S, 3, H, D), or (total, 3, H, D) with
    cu_seqlens; dropout only in training."""

    def __init__(self, causal=False, softmax_scale=None, attention_dropout=0.0, window_size=(-1, -1),
                 alibi_slopes=None, deterministic=False):
        super().__init__("FlashSelfAttention", causal=causal, softmax_scale=softmax_scale,
                         attention_dropout=attention_dropout, window_size=window_size,
                         alibi_slopes=alibi_slopes, deterministic=deterministic)

    def forward(self, qkv, causal=None, cu_seqlens=None, max_seqlen=None):
        causal = self.causal if causal is None else causal
        dropout_p = self.drop.p if self.training else 0.0
        if cu_seqlens is not None:
            q, k, v = qkv.unbind(dim=1)
            return _varlen(q, k, v, cu_seqlens, cu_seqlens, dropout_p, self.softmax_scale, causal,
                           self.window_size, 0.0, self.alibi_slopes)
        q, k, v = qkv.unbind(dim=2)
        return _dense(q, k, v, dropout_p, self.softmax_scale, causal, self.window_size, 0.0, self.alibi_slopes)


class FlashCrossAttention(_FlashAttention):
    """softmax(Q K^T * softmax_scale) V with packed kv: q (B, Sq, H, D), kv (B, Sk, 2, Hk, D), or
    (total, ...) with cu_seqlens and cu_seqlens_k."""

    def __init__(self, causal=False, softmax_scale=None, attention_dropout=0.0, alibi_slopes=None,
                 window_size=(-1, -1), deterministic=False):
        super().__init__("FlashCrossAttention", causal=causal, softmax_scale=softmax_scale,
                         attention_dropout=attention_dropout, window_size=window_size,
                         alibi_slopes=alibi_slopes, deterministic=deterministic)

    def forward(self, q, kv, causal=None, cu_seqlens=None, max_seqlen=None, cu_seqlens_k=None, max_seqlen_k=None):
        causal = self.causal if causal is None else causal
        dropout_p = self.drop.p if self.training else 0.0
        if cu_seqlens is not None:
            k, v = kv.unbind(dim=1)
            return _varlen(q, k, v, cu_seqlens, cu_seqlens_k, dropout_p, self.softmax_scale, causal,
                           self.window_size, 0.0, self.alibi_slopes)
        k, v = kv.unbind(dim=2)
        return _dense(q, k, v, dropout_p, self.softmax_scale, causal, self.window_size, 0.0, self.alibi_slopes)


__getattr__ = module_getattr(MODULE, __name__)
