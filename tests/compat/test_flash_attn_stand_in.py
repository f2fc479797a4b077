"""The flash_attn stand-in computes flash-attn's attention: checked against attention written out
(_attention_reference), causal or not, Sq != Sk (bottom-right alignment), GQA/MQA, windows,
packed forms and varlen batches of several sequences."""

from __future__ import annotations

import pytest
import torch

from tests.compat import _attention_reference as reference
from torchport.compat.flash_attn import (
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    flash_attn_varlen_kvpacked_func,
    flash_attn_varlen_qkvpacked_func,
)
from torchport.compat.flash_attn.layers.rotary import RotaryEmbedding, apply_rotary_emb
from torchport.compat.flash_attn.losses.cross_entropy import CrossEntropyLoss
from torchport.compat.flash_attn.modules.mha import FlashCrossAttention, FlashSelfAttention
from torchport.compat.flash_attn.ops.rms_norm import RMSNorm, dropout_add_rms_norm


def tensors(b, sq, sk, heads, kv_heads, d=8, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(b, sq, heads, d, generator=generator, dtype=torch.float64),
            torch.randn(b, sk, kv_heads, d, generator=generator, dtype=torch.float64),
            torch.randn(b, sk, kv_heads, d, generator=generator, dtype=torch.float64))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("sq,sk", [(6, 6), (3, 7), (7, 3)], ids=["square", "fewer queries", "more queries"])
@pytest.mark.parametrize("kv_heads", [4, 2, 1], ids=["MHA", "GQA", "MQA"])
def test_flash_attn_func_matches_attention_written_out_with_a_bottom_right_causal_mask(causal, sq, sk, kv_heads):
    q, k, v = tensors(2, sq, sk, 4, kv_heads)
    expected = reference.attention(q, k, v, reference.mask(sq, sk, causal, bottom_right=True))
    got = flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=0.3 if causal else None, causal=causal)
    if causal:
        expected = reference.attention(q, k, v, reference.mask(sq, sk, True, bottom_right=True), scale=0.3)
    torch.testing.assert_close(got, expected)


def test_with_more_queries_than_keys_the_rows_that_see_no_key_are_zero_as_flash_attn_returns_them():
    q, k, v = tensors(1, 5, 2, 2, 2)
    out = flash_attn_func(q, k, v, causal=True)
    assert torch.equal(out[:, :3], torch.zeros_like(out[:, :3])) and out[:, 3:].abs().sum() > 0


def test_a_sliding_window_counts_from_the_bottom_right_diagonal():
    q, k, v = tensors(2, 5, 8, 2, 2)
    expected = reference.attention(q, k, v, reference.mask(5, 8, True, bottom_right=True, left=2))
    torch.testing.assert_close(flash_attn_func(q, k, v, causal=True, window_size=(2, -1)), expected)
    torch.testing.assert_close(flash_attn_func(q, k, v, causal=True, window_size=(2, 0)), expected)


def test_the_packed_forms_equal_the_unpacked_one():
    q, k, v = tensors(2, 6, 6, 4, 4)
    expected = flash_attn_func(q, k, v, causal=True)
    torch.testing.assert_close(flash_attn_qkvpacked_func(torch.stack((q, k, v), dim=2), causal=True), expected)
    torch.testing.assert_close(flash_attn_kvpacked_func(q, torch.stack((k, v), dim=2), causal=True), expected)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_varlen_attends_within_each_of_several_sequences(causal):
    lengths_q, lengths_k = [3, 1, 5], [4, 2, 5]
    q, k, v = tensors(1, sum(lengths_q), sum(lengths_k), 4, 2)
    q, k, v = q[0], k[0], v[0]  # (total, H, D)
    cu_q = torch.tensor([0, 3, 4, 9], dtype=torch.int32)
    cu_k = torch.tensor([0, 4, 6, 11], dtype=torch.int32)
    got = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 5, 5, causal=causal)
    pieces = []
    for (q0, q1), (k0, k1) in zip(zip(cu_q[:-1], cu_q[1:]), zip(cu_k[:-1], cu_k[1:])):
        allowed = reference.mask(int(q1 - q0), int(k1 - k0), causal, bottom_right=True)
        pieces.append(reference.attention(q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], allowed)[0])
    torch.testing.assert_close(got, torch.cat(pieces))
    kv = torch.stack((k, v), dim=1)
    torch.testing.assert_close(flash_attn_varlen_kvpacked_func(q, kv, cu_q, cu_k, 5, 5, causal=causal), got)


def test_varlen_qkvpacked_equals_the_dense_function_on_each_sequence():
    lengths = [2, 5, 3]
    qkv = torch.randn(sum(lengths), 3, 2, 8, dtype=torch.float64)
    cu = torch.tensor([0, 2, 7, 10], dtype=torch.int32)
    got = flash_attn_varlen_qkvpacked_func(qkv, cu, 5, causal=True)
    for start, end in [(0, 2), (2, 7), (7, 10)]:
        torch.testing.assert_close(got[start:end], flash_attn_qkvpacked_func(qkv[None, start:end], causal=True)[0])


def test_return_attn_probs_is_refused_with_what_to_do():
    q, k, v = tensors(1, 2, 2, 1, 1)
    with pytest.raises(NotImplementedError, match="return_attn_probs"):
        flash_attn_func(q, k, v, return_attn_probs=True)


def test_the_attention_modules_compute_the_functions():
    q, k, v = tensors(2, 4, 4, 2, 2)
    self_attention = FlashSelfAttention(causal=True, attention_dropout=0.5).eval()
    torch.testing.assert_close(self_attention(torch.stack((q, k, v), dim=2)), flash_attn_func(q, k, v, causal=True))
    q2, k2, v2 = tensors(2, 3, 5, 2, 1, seed=1)
    cross = FlashCrossAttention(causal=True)
    torch.testing.assert_close(cross(q2, torch.stack((k2, v2), dim=2)),
                               reference.attention(q2, k2, v2, reference.mask(3, 5, True, bottom_right=True)))


def test_rotary_embedding_rotates_halves_or_pairs_by_position():
    x = torch.randn(2, 5, 3, 8, dtype=torch.float64)
    angles = torch.outer(torch.arange(5, dtype=torch.float64), torch.tensor([1.0, 0.1, 0.01]))  # rotary_dim 6
    cos, sin = angles.cos(), angles.sin()
    got = apply_rotary_emb(x, cos, sin)
    c, s = cos[None, :, None], sin[None, :, None]
    x1, x2 = x[..., :3], x[..., 3:6]
    torch.testing.assert_close(got, torch.cat((x1 * c - x2 * s, x1 * s + x2 * c, x[..., 6:]), dim=-1))
    pairs = apply_rotary_emb(x, cos, sin, interleaved=True)
    even, odd = x[..., 0:6:2], x[..., 1:6:2]
    torch.testing.assert_close(pairs[..., 0:6:2], even * c - odd * s)
    torch.testing.assert_close(pairs[..., 1:6:2], even * s + odd * c)


def test_rotary_embedding_module_rotates_q_and_k_of_packed_qkv_in_place():
    qkv = torch.randn(1, 4, 3, 2, 8)
    rotary = RotaryEmbedding(8)
    cos, sin = rotary.tables(4, qkv.device, qkv.dtype)
    expected_q, expected_k = apply_rotary_emb(qkv[:, :, 0], cos, sin), apply_rotary_emb(qkv[:, :, 1], cos, sin)
    v = qkv[:, :, 2].clone()
    out = rotary(qkv)
    assert out is qkv
    torch.testing.assert_close(qkv[:, :, 0], expected_q)
    torch.testing.assert_close(qkv[:, :, 1], expected_k)
    assert torch.equal(qkv[:, :, 2], v)


def test_rms_norm_and_its_prenorm_residual_form():
    x, residual = torch.randn(3, 8, dtype=torch.float64), torch.randn(3, 8, dtype=torch.float64)
    norm = RMSNorm(8, eps=1e-6).double()
    with torch.no_grad():
        norm.weight.uniform_()
    rms = lambda t: t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * norm.weight  # noqa: E731
    torch.testing.assert_close(norm(x), rms(x))
    out, total = dropout_add_rms_norm(x, residual, norm.weight, None, 0.0, 1e-6, prenorm=True)
    torch.testing.assert_close(total, x + residual)
    torch.testing.assert_close(out, rms(x + residual))


def test_cross_entropy_with_z_loss_and_ignored_rows():
    logits = torch.randn(6, 11, dtype=torch.float64)
    target = torch.tensor([1, 3, -100, 10, 0, -100])
    loss, z = CrossEntropyLoss(lse_square_scale=1e-3, return_z_loss=True)(logits, target)
    kept = target != -100
    lse = torch.logsumexp(logits[kept], dim=-1)
    nll = lse - logits[kept].gather(1, target[kept, None])[:, 0]
    torch.testing.assert_close(z, (1e-3 * lse**2).mean(), check_dtype=False)
    torch.testing.assert_close(loss, (nll + 1e-3 * lse**2).mean(), check_dtype=False)
