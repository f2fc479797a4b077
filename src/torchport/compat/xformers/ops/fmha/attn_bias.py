"""xformers.ops.fmha.attn_bias: the attention biases memory_efficient_attention takes, as data its
stand-in reads (each can also `materialize` itself as xformers' do: 0 where seen, -inf where not).

LowerTriangularMask is aligned top-left (query i sees keys 0..i), LowerTriangularFromBottomRightMask
bottom-right; the BlockDiagonal masks say which rows of a packed batch (B = 1, sequences one after
another) belong together."""

from __future__ import annotations

import torch

from torchport.compat._attention import BOTTOM_RIGHT, TOP_LEFT, allowed_keys, segments
from torchport.compat._kernels_log import module_getattr


class AttentionBias:
    """What every bias has: whether it is causal and from which corner, and a tensor to add."""

    causal = False
    align = TOP_LEFT
    tensor = None

    def materialize(self, shape, dtype=torch.float32, device=None):
        sq, sk = shape[-2], shape[-1]
        allowed = allowed_keys(sq, sk, self.causal, self.align, (-1, -1), device)
        bias = torch.zeros(shape, dtype=dtype, device=device)
        if self.tensor is not None:
            bias = bias + self.tensor.to(dtype=dtype, device=device)
        return bias if allowed is None else bias.masked_fill(~allowed, float("-inf"))


class LowerTriangularMask(AttentionBias):
    causal = True

    def __init__(self, *tensor_args, **tensor_kwargs) -> None:
        pass  # (xformers' legacy arguments: a shape it never needs)

    def add_bias(self, bias):
        return LowerTriangularMaskWithTensorBias(bias)


class LowerTriangularFromBottomRightMask(LowerTriangularMask):
    align = BOTTOM_RIGHT


class LowerTriangularMaskWithTensorBias(LowerTriangularMask):
    def __init__(self, bias) -> None:
        self.tensor = bias


class BlockDiagonalMask(AttentionBias):
    """Sequences packed along dimension 1 of a batch of one: q_seqinfo/k_seqinfo are each
    sequence's (start, end) rows."""

    def __init__(self, q_seqinfo, k_seqinfo, causal=False) -> None:
        self.q_seqinfo, self.k_seqinfo, self.causal = q_seqinfo, k_seqinfo, causal

    @classmethod
    def from_seqlens(cls, q_seqlen, kv_seqlen=None):
        return cls(_starts_ends(q_seqlen), _starts_ends(q_seqlen if kv_seqlen is None else kv_seqlen),
                   causal=cls is BlockDiagonalCausalMask)

    @classmethod
    def from_tensor_list(cls, tensors):
        """(the mask, the tensors (B_i, S_i, ...) concatenated into one sequence of a batch of one)."""
        lengths = [length for tensor in tensors for length in [tensor.shape[1]] * tensor.shape[0]]
        packed = torch.cat([tensor.reshape(1, -1, *tensor.shape[2:]) for tensor in tensors], dim=1)
        return cls.from_seqlens(lengths), packed

    def make_causal(self):
        return BlockDiagonalCausalMask(self.q_seqinfo, self.k_seqinfo, causal=True)

    def split(self, tensor, batch_sizes=None):
        """The packed tensor cut back into its sequences, (1, S_i, ...) each."""
        return [tensor[:, start:end] for start, end in self.q_seqinfo]

    def materialize(self, shape, dtype=torch.float32, device=None):
        bias = torch.full(shape, float("-inf"), dtype=dtype, device=device)
        for (q0, q1), (k0, k1) in zip(self.q_seqinfo, self.k_seqinfo):
            bias[..., q0:q1, k0:k1] = AttentionBias.materialize(self, (q1 - q0, k1 - k0), dtype, device)
        return bias


class BlockDiagonalCausalMask(BlockDiagonalMask):
    causal = True


def _starts_ends(lengths) -> list[tuple[int, int]]:
    ends = [0]
    for length in lengths:
        ends.append(ends[-1] + int(length))
    return segments(ends)


__getattr__ = module_getattr("xformers.ops.fmha.attn_bias", __name__)
