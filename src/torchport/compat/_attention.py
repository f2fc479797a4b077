"""Scaled dot-product attention as the CUDA attention kernels define it, computed by
F.scaled_dot_product_attention: masks aligned top-left (xformers' LowerTriangularMask, SDPA's
is_causal) or bottom-right (flash-attn >= 2.1), sliding windows, additive biases, fewer key/value
heads than query heads, and softcapping (computed explicitly: SDPA has none).

Layout (B, H, S, D) throughout; the stand-ins transpose their own layouts to it. A query row that
may see no key at all (bottom-right causal with more queries than keys) is zero, as flash-attn
returns it (SDPA would give NaN).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

TOP_LEFT, BOTTOM_RIGHT = "top-left", "bottom-right"


def attend(q, k, v, *, causal: bool = False, align: str = TOP_LEFT, window=(-1, -1), bias=None,
           dropout_p: float = 0.0, scale=None, softcap: float = 0.0):
    """q (B, H, Sq, D), k and v (B, Hk, Sk, D) with Hk dividing H -> (B, H, Sq, D).

    `window` (left, right): how far before and after its diagonal a query sees (-1: no limit);
    `bias`: added to the scores (broadcast to (B, H, Sq, Sk))."""
    sq, sk, window = q.shape[-2], k.shape[-2], tuple(window)
    allowed = allowed_keys(sq, sk, causal, align, window, q.device)
    if softcap:
        return _explicit(q, k, v, allowed, bias, dropout_p, scale, softcap)
    gqa = k.shape[-3] != q.shape[-3]
    if allowed is None and bias is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=False, scale=scale,
                                              enable_gqa=gqa)
    if allowed is not None and bias is None and causal and window == (-1, -1) and (sq == sk or align == TOP_LEFT):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True, scale=scale,
                                              enable_gqa=gqa)
    seeing = None if allowed is None else allowed.any(-1, keepdim=True)  # (Sq, 1): rows with a key
    if seeing is not None:
        allowed = allowed | ~seeing  # (no row fully masked: SDPA's NaN; zeroed below)
    mask = allowed
    if bias is not None:
        bias = bias.to(q.dtype)
        mask = bias if allowed is None else bias.masked_fill(~allowed, float("-inf"))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale, enable_gqa=gqa)
    return out if seeing is None or bool(seeing.all()) else out * seeing.to(out.dtype)


def allowed_keys(sq: int, sk: int, causal: bool, align: str, window, device):
    """(Sq, Sk) bool: which keys each query may see, or None where it sees all."""
    left, right = window
    if causal:
        right = 0 if right < 0 else min(right, 0)
    if left < 0 and right < 0:
        return None
    shift = sk - sq if align == BOTTOM_RIGHT else 0
    rows = torch.arange(sq, device=device)[:, None] + shift  # each query's diagonal
    keys = torch.arange(sk, device=device)[None, :]
    allowed = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if right >= 0:
        allowed &= keys <= rows + right
    if left >= 0:
        allowed &= keys >= rows - left
    return allowed


def _explicit(q, k, v, allowed, bias, dropout_p, scale, softcap):
    """softmax(softcap * tanh(q k^T * scale / softcap) + bias, masked) v, written out."""
    if k.shape[-3] != q.shape[-3]:
        repeat = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(repeat, dim=-3), v.repeat_interleave(repeat, dim=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    scores = softcap * torch.tanh(scores / softcap)
    if bias is not None:
        scores = scores + bias.to(scores.dtype)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores.float(), dim=-1).nan_to_num(0.0).to(q.dtype)
    if dropout_p:
        weights = F.dropout(weights, dropout_p)
    return torch.matmul(weights, v)


def segments(cu_seqlens) -> list[tuple[int, int]]:
    """[(start, end)] of each sequence in a packed batch, from its cumulative lengths."""
    ends = [int(end) for end in (cu_seqlens.tolist() if hasattr(cu_seqlens, "tolist") else cu_seqlens)]
    return list(zip(ends[:-1], ends[1:]))
