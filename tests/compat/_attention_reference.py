"""Attention written out, independently of the stand-ins: softmax(Q K^T * scale + bias, masked) V
in float64 with einsum, the mask built entry by entry from its definition."""

from __future__ import annotations

import math

import torch


def mask(sq: int, sk: int, causal: bool, bottom_right: bool, left: int = -1) -> torch.Tensor:
    """allowed[i][j]: query i sees key j."""
    shift = sk - sq if bottom_right else 0
    allowed = torch.ones(sq, sk, dtype=torch.bool)
    for i in range(sq):
        for j in range(sk):
            if causal and j > i + shift:
                allowed[i, j] = False
            if left >= 0 and j < i + shift - left:
                allowed[i, j] = False
    return allowed


def attention(q, k, v, allowed=None, bias=None, scale=None):
    """q (B, Sq, H, D), k and v (B, Sk, Hk, D) -> (B, Sq, H, D); a row that sees no key is 0."""
    q, k, v = q.double(), k.double(), v.double()
    group = q.shape[2] // k.shape[2]
    k, v = k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if bias is not None:
        scores = scores + bias.double()
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return torch.einsum("bhqk,bkhd->bqhd", weights, v)
