"""The xformers stand-in computes memory_efficient_attention as xformers defines it (checked against
attention written out): no bias, LowerTriangularMask (aligned top-left), a tensor bias, both, and
block-diagonal packed batches; SwiGLU is w3(silu(w1 x) * w2 x)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.compat import _attention_reference as reference
from torchport.compat.xformers.ops import LowerTriangularMask, SwiGLU, fmha, memory_efficient_attention
from torchport.compat.xformers.ops.fmha.attn_bias import BlockDiagonalMask, LowerTriangularFromBottomRightMask


def tensors(b, sq, sk, heads=2, d=8, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(b, s, heads, d, generator=generator, dtype=torch.float64) for s in (sq, sk, sk)]


@pytest.mark.parametrize("sq,sk", [(5, 5), (3, 6)], ids=["square", "fewer queries"])
def test_without_a_bias_and_with_a_lower_triangular_mask_aligned_top_left(sq, sk):
    q, k, v = tensors(2, sq, sk)
    torch.testing.assert_close(memory_efficient_attention(q, k, v), reference.attention(q, k, v))
    expected = reference.attention(q, k, v, reference.mask(sq, sk, True, bottom_right=False))
    torch.testing.assert_close(memory_efficient_attention(q, k, v, attn_bias=LowerTriangularMask()), expected)
    from_bottom = reference.attention(q, k, v, reference.mask(sq, sk, True, bottom_right=True))
    torch.testing.assert_close(memory_efficient_attention(q, k, v, attn_bias=LowerTriangularFromBottomRightMask()),
                               from_bottom)


def test_a_tensor_bias_is_added_to_the_scores_alone_or_with_the_causal_mask():
    q, k, v = tensors(2, 4, 4)
    bias = torch.randn(2, 2, 4, 4, dtype=torch.float64)
    torch.testing.assert_close(memory_efficient_attention(q, k, v, attn_bias=bias, scale=0.5),
                               reference.attention(q, k, v, bias=bias, scale=0.5))
    expected = reference.attention(q, k, v, reference.mask(4, 4, True, bottom_right=False), bias=bias)
    torch.testing.assert_close(memory_efficient_attention(q, k, v, attn_bias=LowerTriangularMask().add_bias(bias)),
                               expected)


@pytest.mark.parametrize("causal", [False, True], ids=["block diagonal", "block diagonal causal"])
def test_a_block_diagonal_mask_keeps_each_packed_sequence_to_itself(causal):
    lengths = [3, 1, 4]
    q, k, v = tensors(1, 8, 8)
    bias = BlockDiagonalMask.from_seqlens(lengths)
    bias = bias.make_causal() if causal else bias
    got = memory_efficient_attention(q, k, v, attn_bias=bias)
    starts = [0, 3, 4, 8]
    for start, end in zip(starts[:-1], starts[1:]):
        allowed = reference.mask(end - start, end - start, causal, bottom_right=False)
        torch.testing.assert_close(got[:, start:end], reference.attention(q[:, start:end], k[:, start:end],
                                                                          v[:, start:end], allowed))
    materialized = bias.materialize((8, 8), dtype=torch.float64)
    torch.testing.assert_close(got, reference.attention(q, k, v, bias=materialized))


def test_the_bias_classes_import_from_where_xformers_keeps_them():
    assert fmha.LowerTriangularMask is LowerTriangularMask and fmha.attn_bias.BlockDiagonalMask is BlockDiagonalMask


@pytest.mark.parametrize("packed", [True, False], ids=["w12", "w1 w2"])
def test_swiglu_is_w3_of_silu_w1_times_w2(packed):
    swiglu = SwiGLU(6, 10, 4, bias=True, _pack_weights=packed)
    x = torch.randn(3, 6)
    if packed:
        gate, up = F.linear(x, swiglu.w12.weight, swiglu.w12.bias).chunk(2, dim=-1)
    else:
        gate, up = swiglu.w1(x), swiglu.w2(x)
    torch.testing.assert_close(swiglu(x), swiglu.w3(F.silu(gate) * up))


def test_the_indexing_helpers_select_and_add_rows_as_xformers_documents():
    from torchport.compat.xformers.ops import index_select_cat, scaled_index_add

    sources = [torch.arange(6.0).view(3, 2), torch.arange(4.0).view(2, 2)]
    assert index_select_cat(sources, [torch.tensor([2, 0]), torch.tensor([1])]).tolist() == [4, 5, 0, 1, 2, 3]
    added = scaled_index_add(torch.zeros(3, 2), torch.tensor([1]), torch.ones(1, 2), torch.tensor([2.0, 3.0]),
                             alpha=0.5)
    assert added.tolist() == [[0, 0], [1.0, 1.5], [0, 0]]
