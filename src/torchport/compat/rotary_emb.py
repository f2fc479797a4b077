"""flash-attn's compiled rotary extension (`import rotary_emb`, csrc/rotary) on torch, for code
that calls its one function itself (TinyLlama's fused_rotary_embedding.py does)."""

from __future__ import annotations

from torchport.apis.kernels_llm import ROTARY_EMB
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr


def apply_rotary(x1, x2, cos, sin, out1, out2, conj):
    """out1 = x1 cos - x2 sin, out2 = x1 sin + x2 cos (sin negated with conj), in float32; the
    outputs may be the inputs themselves (views of one tensor: the write bypasses autograd's
version counters, as the CUDA kernel's does, so that the caller's autograd.Function works as on CUDA)."""
    _kernels_log.adapted(f"{ROTARY_EMB}.apply_rotary", "torch", "the rotation, unfused")
    cos, sin = cos.float(), (-sin if conj else sin).float()
    first, second = x1.float(), x2.float()
    new1, new2 = first * cos - second * sin, first * sin + second * cos
    out1.data.copy_(new1)  # (into memory, as the kernel writes: autograd sees no in-place change, as with it)
    out2.data.copy_(new2)


__getattr__ = module_getattr(ROTARY_EMB, __name__)
