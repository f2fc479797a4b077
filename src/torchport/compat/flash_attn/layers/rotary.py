"""flash_attn.layers.rotary on torch: rotary position embeddings, rotate-half (GPT-NeoX) or
interleaved (GPT-J) pairs, over the first 2 * cos.shape[-1] channels, computed in float32 as
flash-attn's kernel does. x is (B, S, H, D), or (total, H, D) with cu_seqlens; cos and sin are
(S_rotary, rotary_dim / 2). The `_qkv_`/`_kv_` forms write into their argument and return it."""

from __future__ import annotations

import torch

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat import _kernels_log
from torchport.compat._attention import segments
from torchport.compat._kernels_log import module_getattr

MODULE = f"{FLASH_ATTN}.layers.rotary"


def rotate(x, cos, sin, interleaved=False, conjugate=False):
    """x's first 2 * cos.shape[-1] channels rotated; cos and sin broadcast against x[..., :rd/2]."""
    half = cos.shape[-1]
    rotated, rest = x[..., :2 * half].float(), x[..., 2 * half:]
    cos, sin = cos.float(), (-sin if conjugate else sin).float()
    if interleaved:
        first, second = rotated[..., 0::2], rotated[..., 1::2]
        out = torch.stack((first * cos - second * sin, first * sin + second * cos), dim=-1).flatten(-2)
    else:
        first, second = rotated[..., :half], rotated[..., half:]
        out = torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)
    return torch.cat((out.to(x.dtype), rest), dim=-1)


def _tables(cos, sin, x, seqlen_offsets, cu_seqlens):
    """cos and sin indexed by each token's position, shaped to broadcast against x's heads."""
    if cu_seqlens is not None:
        positions = torch.cat([torch.arange(end - start, device=cos.device) for start, end in segments(cu_seqlens)])
        if torch.is_tensor(seqlen_offsets):
            lengths = [end - start for start, end in segments(cu_seqlens)]
            positions = positions + torch.repeat_interleave(seqlen_offsets.to(cos.device),
                                                            torch.tensor(lengths, device=cos.device))
        else:
            positions = positions + seqlen_offsets
        return cos[positions][:, None], sin[positions][:, None]  # (total, 1, rd/2)
    length = x.shape[1]
    if torch.is_tensor(seqlen_offsets):
        positions = seqlen_offsets.to(cos.device)[:, None] + torch.arange(length, device=cos.device)
        return cos[positions][:, :, None], sin[positions][:, :, None]  # (B, S, 1, rd/2)
    return (cos[seqlen_offsets:seqlen_offsets + length][:, None],
            sin[seqlen_offsets:seqlen_offsets + length][:, None])  # (S, 1, rd/2)


def apply_rotary_emb(x, cos, sin, interleaved=False, inplace=False, seqlen_offsets=0, cu_seqlens=None,
                     max_seqlen=None):
    _kernels_log.adapted(f"{MODULE}.apply_rotary_emb", "torch", "x * cos + rotate_half(x) * sin, unfused")
    return _apply(x, cos, sin, interleaved, inplace, seqlen_offsets, cu_seqlens)


apply_rotary_emb_func = apply_rotary_emb  # (flash-attn's older name)


def _apply(x, cos, sin, interleaved, inplace, seqlen_offsets, cu_seqlens=None):
    cos, sin = _tables(cos, sin, x, seqlen_offsets, cu_seqlens)
    out = rotate(x.clone() if inplace else x, cos, sin, interleaved)
    return x.copy_(out) if inplace else out


def apply_rotary_emb_qkv_(qkv, cos, sin, cos_k=None, sin_k=None, interleaved=False, seqlen_offsets=0,
                          num_heads_q=None):
    """qkv (B, S, 3, H, D) (or (B, S, H_q + 2 H_k, D) with num_heads_q): q and k rotated in place."""
    _kernels_log.adapted(f"{MODULE}.apply_rotary_emb_qkv_", "torch", "x * cos + rotate_half(x) * sin, unfused")
    cos_k, sin_k = (cos, sin) if cos_k is None else (cos_k, sin_k)
    if qkv.dim() == 5:
        q, k = qkv[:, :, 0], qkv[:, :, 1]
    else:
        heads_k = (qkv.shape[2] - num_heads_q) // 2
        q, k = qkv[:, :, :num_heads_q], qkv[:, :, num_heads_q:num_heads_q + heads_k]
    _apply(q, cos, sin, interleaved, True, seqlen_offsets)
    _apply(k, cos_k, sin_k, interleaved, True, seqlen_offsets)
    return qkv


def apply_rotary_emb_kv_(kv, cos, sin, interleaved=False, seqlen_offsets=0):
    """kv (B, S, 2, H, D): k rotated in place."""
    _kernels_log.adapted(f"{MODULE}.apply_rotary_emb_kv_", "torch", "x * cos + rotate_half(x) * sin, unfused")
    _apply(kv[:, :, 0], cos, sin, interleaved, True, seqlen_offsets)
    return kv


class RotaryEmbedding(torch.nn.Module):
    """flash-attn's RotaryEmbedding (without XPos: scale_base is refused): inverse frequencies
    base^(-2i/dim), positions in float32, cos/sin tables in the input's dtype."""

    def __init__(self, dim, base=10000.0, interleaved=False, scale_base=None, pos_idx_in_fp32=True, device=None):
        super().__init__()
        if scale_base is not None:
            raise NotImplementedError(f"{MODULE}.RotaryEmbedding(scale_base=...): XPos has no stand-in in torchport")
        _kernels_log.adapted(f"{MODULE}.RotaryEmbedding", "torch", "x * cos + rotate_half(x) * sin, unfused")
        self.dim, self.base, self.interleaved = dim, float(base), interleaved
        inv_freq = 1.0 / (self.base ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def tables(self, length, device, dtype):
        positions = torch.arange(length, device=device, dtype=torch.float32)
        freqs = torch.outer(positions, self.inv_freq.to(device=device, dtype=torch.float32))
        return torch.cos(freqs).to(dtype), torch.sin(freqs).to(dtype)

    def forward(self, qkv, kv=None, seqlen_offset=0, max_seqlen=None):
        length = max_seqlen if max_seqlen is not None else qkv.shape[1] + (
            int(seqlen_offset.max()) if torch.is_tensor(seqlen_offset) else seqlen_offset)
        cos, sin = self.tables(length, qkv.device, qkv.dtype)
        if kv is None:
            if qkv.dim() == 5:
                _apply(qkv[:, :, 0], cos, sin, self.interleaved, True, seqlen_offset)
                _apply(qkv[:, :, 1], cos, sin, self.interleaved, True, seqlen_offset)
                return qkv
            raise NotImplementedError(f"{MODULE}.RotaryEmbedding: give qkv as (B, S, 3, H, D)")
        q = _apply(qkv, cos, sin, self.interleaved, True, seqlen_offset)
        _apply(kv[:, :, 0], cos, sin, self.interleaved, True, seqlen_offset)
        return q, kv


__getattr__ = module_getattr(MODULE, __name__)
