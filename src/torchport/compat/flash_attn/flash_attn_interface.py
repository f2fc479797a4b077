"""flash-attn's attention functions on F.scaled_dot_product_attention.

Tensors come in flash-attn's layout, (B, S, H, D) (varlen: (total, H, D) with cumulative sequence
lengths), key/value heads dividing the query heads. Causal masks and windows are aligned
bottom-right (flash-attn >= 2.1): with Sq != Sk query i sees keys up to i + Sk - Sq.
`deterministic` changes nothing here (SDPA on these targets is deterministic); `alibi_slopes`
becomes an additive bias; `return_attn_probs` and the paged `block_table` are refused with a
message (apis/kernels_llm.FLASH_ATTN_REFUSED)."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import FLASH_ATTN, FLASH_ATTN_FUNCTIONS, FLASH_ATTN_REFUSED, SDPA
from torchport.compat import _kernels_log
from torchport.compat._attention import BOTTOM_RIGHT, attend, segments


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False, return_attn_probs=False):
    _log("flash_attn_func", return_attn_probs=return_attn_probs)
    return _dense(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                              softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False):
    _log("flash_attn_qkvpacked_func", return_attn_probs=return_attn_probs)
    q, k, v = qkv.unbind(dim=2)
    return _dense(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                             softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False):
    _log("flash_attn_kvpacked_func", return_attn_probs=return_attn_probs)
    k, v = kv.unbind(dim=2)
    return _dense(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None):
    _log("flash_attn_varlen_func", return_attn_probs=return_attn_probs, block_table=block_table)
    return _varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, dropout_p, softmax_scale, causal, window_size, softcap,
                   alibi_slopes)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0, softmax_scale=None, causal=False,
                                     window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                                     return_attn_probs=False):
    _log("flash_attn_varlen_qkvpacked_func", return_attn_probs=return_attn_probs)
    q, k, v = qkv.unbind(dim=1)
    return _varlen(q, k, v, cu_seqlens, cu_seqlens, dropout_p, softmax_scale, causal, window_size, softcap,
                   alibi_slopes)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                                    softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False, return_attn_probs=False):
    _log("flash_attn_varlen_kvpacked_func", return_attn_probs=return_attn_probs)
    k, v = kv.unbind(dim=1)
    return _varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, dropout_p, softmax_scale, causal, window_size, softcap,
                   alibi_slopes)


def _log(name: str, **refusable) -> None:
    for argument, value in refusable.items():
        if value not in (None, False):
            raise NotImplementedError(f"{FLASH_ATTN}.{name}({argument}=...): {FLASH_ATTN_REFUSED[argument]}")
    _kernels_log.adapted(f"{FLASH_ATTN}.{name}", SDPA, FLASH_ATTN_FUNCTIONS[name], depth=2)


def _dense(q, k, v, dropout_p, scale, causal, window, softcap, alibi_slopes):
    """(B, S, H, D) in and out."""
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    bias = None if alibi_slopes is None else alibi_bias(alibi_slopes, q.shape[-2], k.shape[-2])
    out = attend(q, k, v, causal=causal, align=BOTTOM_RIGHT, window=window, bias=bias, dropout_p=dropout_p,
                 scale=scale, softcap=softcap)
    return out.transpose(1, 2)


def _varlen(q, k, v, cu_q, cu_k, dropout_p, scale, causal, window, softcap, alibi_slopes):
    """(total, H, D) in and out: each packed sequence attends within itself."""
    outs = []
    for index, ((q0, q1), (k0, k1)) in enumerate(zip(segments(cu_q), segments(cu_k))):
        pieces = (q[q0:q1], k[k0:k1], v[k0:k1])
        slopes = alibi_slopes if alibi_slopes is None or alibi_slopes.dim() == 1 else alibi_slopes[index:index + 1]
        outs.append(_dense(*(t.unsqueeze(0) for t in pieces), dropout_p, scale, causal, window, softcap, slopes)[0])
    rest = q.shape[0] - sum(out.shape[0] for out in outs)  # (rows past the last sequence: none of them)
    if rest:
        outs.append(q.new_zeros((rest, *q.shape[1:-1], v.shape[-1])))
    return torch.cat(outs)


def alibi_bias(slopes, sq: int, sk: int):
    """flash-attn's ALiBi: -slope * |i + Sk - Sq - j| added to the scores, slopes (H,) or (B, H)."""
    rows = torch.arange(sq, device=slopes.device)[:, None] + sk - sq
    distance = (rows - torch.arange(sk, device=slopes.device)[None, :]).abs()
    slopes = slopes.float()
    slopes = slopes[None, :, None, None] if slopes.dim() == 1 else slopes[:, :, None, None]
    return -slopes * distance
