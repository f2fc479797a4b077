"""torch_npu's fused kernels as torch code (apis/npu_ops.py, compat/torch_npu/ops.py): each
reference function computes what torch_npu documents, checked against a computation written
another way here; each template computes what its reference function does; each reference source
runs alone in a file that only imports torch."""

from __future__ import annotations

import ast
import inspect
import json
import math
import re
from pathlib import Path

import pytest
import torch

from torchport import targets
from torchport.apis.npu_ops import LEFT_OUT, NPU_OPS, REFERENCE_FILE, reference_source
from torchport.compat.torch_npu import ops

from _npu_references import CASES

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def close(got, want, atol=1e-5):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, atol)
    elif isinstance(want, torch.Tensor):
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, atol=atol, rtol=1e-5, equal_nan=True)
    else:
        assert got == want


def call(fn, args, kwargs, seed=0):
    torch.manual_seed(seed)
    return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args],
              **{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})


# ---- the table and the functions name the same kernels, the same way -------------------------

def test_every_kernel_has_a_reference_function_and_every_function_a_kernel():
    defined = {node.name for node in ast.parse(REFERENCE_FILE.read_text()).body if isinstance(node, ast.FunctionDef)}
    assert defined == set(NPU_OPS)
    assert set(CASES) == set(NPU_OPS)
    assert not set(LEFT_OUT) & set(NPU_OPS)


def test_every_kernel_named_is_one_torch_npu_registers():
    kernels = targets.get("npu").kernels
    data = json.loads((Path(targets.__file__).parent / "data" / kernels.own_data).read_text())
    registered = {name.split(".")[0] for name in data["custom"]}
    assert set(NPU_OPS) | set(LEFT_OUT) <= registered


@pytest.mark.parametrize("name", sorted(NPU_OPS))
def test_the_reference_function_takes_the_kernels_parameters_and_defaults(name):
    op, signature = NPU_OPS[name], inspect.signature(getattr(ops, name))
    assert tuple(signature.parameters) == op.parameters
    defaults = {p.name: p.default for p in signature.parameters.values() if p.default is not p.empty}
    assert defaults == {p: ast.literal_eval(source) for p, source in op.defaults.items()}


@pytest.mark.parametrize("name", sorted(NPU_OPS))
def test_each_reference_source_runs_alone_with_only_torch_imported(name):
    namespace = {"torch": torch}
    exec(compile(reference_source(name), f"<{name}>", "exec"), namespace)
    assert set(namespace) == {"torch", "__builtins__", name}
    for args, kwargs in CASES[name]:
        close(call(namespace[name], args, kwargs), call(getattr(ops, name), args, kwargs))


# ---- every template is its reference function ---------------------------------------------------

def _templates(op):
    """(template, literal parameter and value or None, whether it stands for call[0])"""
    if op.inline:
        yield op.inline, None, False
    if op.inline_first:
        yield op.inline_first, None, True
    for parameter, by_literal in op.inline_when.items():
        for literal, template in by_literal.items():
            yield template, (parameter, ast.literal_eval(literal)), False


TEMPLATED = [(name, t, lit, first) for name, op in sorted(NPU_OPS.items()) for t, lit, first in _templates(op)]


@pytest.mark.parametrize("name, template, literal, first", TEMPLATED, ids=[f"{t[0]}-{i}" for i, t in enumerate(TEMPLATED)])
def test_a_template_names_only_its_parameters_each_once_unless_repeated(name, template, literal, first):
    op = NPU_OPS[name]
    named = PLACEHOLDER.findall(template)
    assert set(named) <= set(op.parameters)
    assert [p for p in set(named) if named.count(p) > 1 and p not in op.repeated] == []
    assert literal is None or literal[0] not in named


@pytest.mark.parametrize("name, template, literal, first", TEMPLATED, ids=[f"{t[0]}-{i}" for i, t in enumerate(TEMPLATED)])
def test_a_template_with_its_arguments_substituted_computes_the_reference(name, template, literal, first):
    """Each argument goes in as a low-precedence expression (`v if True else None`), so a
    placeholder that is not a whole operand would change the result or fail to parse."""
    op, reference = NPU_OPS[name], getattr(ops, name)
    signature = inspect.signature(reference)
    for args, kwargs in CASES[name]:
        bound = signature.bind(*args, **kwargs).arguments
        if literal and bound.get(literal[0], ast.literal_eval(op.defaults.get(literal[0], "None"))) != literal[1]:
            continue
        namespace, sources = {"torch": torch}, {}
        for parameter in op.parameters:
            if parameter in bound:
                value = bound[parameter]
                namespace[f"v_{parameter}"] = value.clone() if isinstance(value, torch.Tensor) else value
                plain = f"v_{parameter}"
                sources[parameter] = plain if parameter in op.repeated else f"{plain} if True else None"
            else:
                sources[parameter] = op.defaults[parameter]
        torch.manual_seed(0)
        got = eval(PLACEHOLDER.sub(lambda m: sources[m.group(1)], template), namespace)
        want = call(reference, args, kwargs)
        close(got, want[0] if first else want)


def test_every_template_form_is_exercised_by_a_case():
    exercised = set()
    for name, template, literal, first in TEMPLATED:
        op, signature = NPU_OPS[name], inspect.signature(getattr(ops, name))
        for args, kwargs in CASES[name]:
            bound = signature.bind(*args, **kwargs).arguments
            if literal is None or bound.get(literal[0]) == literal[1]:
                exercised.add(template)
    assert exercised == {t for _, t, _, _ in TEMPLATED}


# ---- each reference function against a computation written another way -------------------------

def test_format_cast_is_the_tensor_itself():
    x = torch.randn(2, 3)
    assert ops.npu_format_cast(x, 29) is x and ops.npu_format_cast_(x, 2) is x


def test_confusion_transpose_gives_the_documented_shapes_and_elements():
    x = torch.arange(2 * 3 * 4 * 6.0).reshape(2, 3, 4, 6)
    first = ops.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 4, 18), True)
    later = ops.npu_confusion_transpose(x, (0, 2, 1), (2, 12, 6), False)
    assert first.shape == (2, 4, 18) and later.shape == (2, 6, 12)
    flat = x.flatten().tolist()
    for b, s, h in [(0, 0, 0), (1, 3, 17), (1, 2, 7)]:  # [b, s, c*6 + d] = x[b, c, s, d]
        assert first[b, s, h] == x[b, h // 6, s, h % 6]
    for b, i, j in [(0, 0, 0), (1, 5, 11), (0, 3, 7)]:  # reshape (2, 12, 6) then swap the last two
        assert later[b, i, j] == flat[b * 72 + j * 6 + i]


def test_transpose_broadcast_and_dtype_cast():
    x = torch.randn(2, 3, 5)
    y = ops.npu_transpose(x, (2, 0, 1))
    assert y.is_contiguous() and all(y[k, i, j] == x[i, j, k] for i in range(2) for j in range(3) for k in range(5))
    z = ops.npu_broadcast(torch.tensor([[1.0], [2.0]]), (2, 3))
    assert z.is_contiguous() and z.tolist() == [[1.0] * 3, [2.0] * 3]
    assert ops.npu_dtype_cast(x, torch.float16).dtype == torch.float16


def test_linear_and_bmm_are_sums_of_products():
    x, w, b = torch.randn(4, 3), torch.randn(5, 3), torch.randn(5)
    close(ops.npu_linear(x, w, b), torch.einsum("ik,jk->ij", x, w) + b)
    a, m = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    close(ops.npu_bmmV2(a, m, [2, 3, 5]), torch.einsum("bij,bjk->bik", a, m))


def test_rms_norm_row_by_row():
    x, g = torch.randn(2, 3, 8), torch.randn(8)
    y, rstd = ops.npu_rms_norm(x, g, 1e-6)
    assert rstd.shape == (2, 3, 1) and rstd.dtype == torch.float32
    for i in range(2):
        for j in range(3):
            row = x[i, j].tolist()
            inv = 1 / math.sqrt(sum(v * v for v in row) / 8 + 1e-6)
            assert rstd[i, j, 0].item() == pytest.approx(inv, rel=1e-5)
            close(y[i, j], torch.tensor([v * inv * gv for v, gv in zip(row, g.tolist())]))
    half = ops.npu_rms_norm(x.half(), g.half())[0]
    assert half.dtype == torch.float16


def test_layer_norm_eval_by_mean_and_variance():
    x, w, b = torch.randn(3, 6), torch.randn(6), torch.randn(6)
    mean, var = x.mean(-1, keepdim=True), ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True)
    close(ops.npu_layer_norm_eval(x, [6], w, b, 1e-5), (x - mean) / torch.sqrt(var + 1e-5) * w + b)


def test_activations_by_their_formulas():
    x = torch.linspace(-4, 4, 17)
    close(ops.npu_gelu(x), 0.5 * x * (1 + torch.erf(x / math.sqrt(2))))
    close(ops.npu_gelu(x, approximate="tanh"), 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))))
    documented = x / (1 + torch.exp(-1.702 * x.abs())) * torch.exp(0.851 * (x - x.abs()))
    close(ops.npu_fast_gelu(x), documented)
    close(ops.fast_gelu(x), documented)
    close(ops.npu_silu(x), x / (1 + torch.exp(-x)))
    y = x.clone()
    assert ops.npu_silu_(y) is y and torch.allclose(y, x / (1 + torch.exp(-x)))
    close(ops.npu_mish(x), x * torch.tanh(torch.log1p(torch.exp(x))))
    h = torch.randn(3, 8)
    close(ops.npu_swiglu(h), h[:, :4] / (1 + torch.exp(-h[:, :4])) * h[:, 4:])
    close(ops.npu_swiglu(h.t(), dim=0), (h[:, :4] / (1 + torch.exp(-h[:, :4])) * h[:, 4:]).t())


def test_rotary_mul_pair_by_pair():
    x, cos, sin = torch.randn(1, 2, 3, 8), torch.randn(1, 1, 3, 8), torch.randn(1, 1, 3, 8)
    half, interleave = torch.empty_like(x), torch.empty_like(x)
    for d in range(8):
        partner = d + 4 if d < 4 else d - 4
        half[..., d] = x[..., d] * cos[..., d] + (-x[..., partner] if d < 4 else x[..., partner]) * sin[..., d]
        mate = d + 1 if d % 2 == 0 else d - 1
        interleave[..., d] = x[..., d] * cos[..., d] + (-x[..., mate] if d % 2 == 0 else x[..., mate]) * sin[..., d]
    close(ops.npu_rotary_mul(x, cos, sin), half)
    close(ops.npu_rotary_mul(x, cos, sin, "interleave"), interleave)
    with pytest.raises(ValueError, match="rotary_mode"):
        ops.npu_rotary_mul(x, cos, sin, "quarter")


def _attention_bnsd(q, k, v, scale, masked=None, pse=None):
    """Explicit softmax attention, head by head; masked: True = left out."""
    out = torch.zeros(q.shape[:3] + v.shape[-1:])
    group = q.shape[1] // k.shape[1]
    for b in range(q.shape[0]):
        for n in range(q.shape[1]):
            s = torch.einsum("id,jd->ij", q[b, n], k[b, n // group])
            if pse is not None:
                s = s + pse[b % pse.shape[0], n]
            s = s * scale
            if masked is not None:
                s = torch.where(masked, torch.tensor(-1e30), s)
            e = torch.exp(s - s.max(-1, keepdim=True).values)
            out[b, n] = (e / e.sum(-1, keepdim=True)) @ v[b, n // group]
    return out


def test_fusion_attention_in_each_layout_with_gqa_mask_and_pse():
    B, N, NKV, SQ, SKV, D = 2, 4, 2, 3, 5, 8
    q, k, v = torch.randn(B, N, SQ, D), torch.randn(B, NKV, SKV, D), torch.randn(B, NKV, SKV, D)
    mask = torch.rand(SQ, SKV, generator=torch.Generator().manual_seed(1)) > 0.6
    mask[:, 0] = False  # no row masked out entirely
    pse = torch.randn(1, N, SQ, SKV)
    want = _attention_bnsd(q, k, v, 0.3, mask, pse)
    layouts = {
        "BNSD": (lambda t: t, lambda t: t),
        "BSND": (lambda t: t.transpose(1, 2), lambda t: t.transpose(1, 2)),
        "BSH": (lambda t: t.transpose(1, 2).flatten(2), lambda t: t.transpose(1, 2).flatten(2)),
        "SBH": (lambda t: t.permute(2, 0, 1, 3).flatten(2), lambda t: t.permute(2, 0, 1, 3).flatten(2)),
    }
    for layout, (into, out_of) in layouts.items():
        result = ops.npu_fusion_attention(into(q), into(k), into(v), N, layout, pse=pse,
                                          atten_mask=mask.to(torch.uint8), scale=0.3)
        assert len(result) == 7 and result[4:] == (0, 0, 0)
        close(result[0], out_of(want))
        assert result[1].shape == result[2].shape == (B, N, SQ, 8) and result[1].dtype == torch.float32


def test_fusion_attention_sparse_modes_build_their_masks_and_ignore_the_given_content():
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
    given = torch.ones(2048, 2048, dtype=torch.bool).triu(1)  # torch_npu's compressed mask
    i, j = torch.arange(3)[:, None], torch.arange(5)[None, :]
    expected = {2: j > i, 3: j > i + 2, 4: (j > i + 2 + 1) | (j < i + 2 - 1)}
    for mode, masked in expected.items():
        got = ops.npu_fusion_attention(q, k, v, 2, "BNSD", atten_mask=given, scale=0.5,
                                       pre_tockens=1, next_tockens=1, sparse_mode=mode)[0]
        close(got, _attention_bnsd(q, k, v, 0.5, masked))
    ignored = ops.npu_fusion_attention(q, k, v, 2, "BNSD", sparse_mode=3, scale=0.5)[0]
    close(ignored, _attention_bnsd(q, k, v, 0.5))


def test_fusion_attention_masks_true_as_torch_npu_does_the_opposite_of_sdpa():
    q = torch.randn(1, 1, 2, 4)
    only_first = torch.tensor([[False, True], [False, True]])  # True: key 1 left out
    out = ops.npu_fusion_attention(q, q, q, 1, "BNSD", atten_mask=only_first)[0]
    close(out, q[:, :, :1].expand(1, 1, 2, 4))


def test_fusion_attention_drops_out_with_keep_prob():
    q = torch.randn(1, 1, 64, 8)
    torch.manual_seed(0)
    dropped = ops.npu_fusion_attention(q, q, q, 1, "BNSD", keep_prob=0.5)[0]
    assert not torch.allclose(dropped, ops.npu_fusion_attention(q, q, q, 1, "BNSD")[0])


@pytest.mark.parametrize("kwargs", [{"input_layout": "TND"}, {"input_layout": "BNSD", "sparse_mode": 5},
                                    {"input_layout": "BNSD", "prefix": [1]}])
def test_fusion_attention_refuses_what_it_cannot_express(kwargs):
    q = torch.randn(1, 1, 2, 4)
    with pytest.raises(NotImplementedError, match="npu_fusion_attention"):
        ops.npu_fusion_attention(q, q, q, 1, **kwargs)


def test_scaled_masked_softmax_by_exponentials():
    x, mask = torch.randn(1, 2, 4, 4), torch.rand(4, 4) > 0.5
    e = torch.exp(torch.where(mask, torch.tensor(-10000.0), x * 0.5))
    close(ops.npu_scaled_masked_softmax(x, mask, 0.5), e / e.sum(-1, keepdim=True))
    upper = torch.ones(4, 4).triu(1).bool()
    e = torch.exp(torch.where(upper, torch.tensor(-10000.0), x))
    close(ops.npu_scaled_masked_softmax(x, torch.zeros(4, 4, dtype=torch.bool), 1, True), e / e.sum(-1, keepdim=True))
    assert ops.npu_scaled_masked_softmax(x.half(), mask).dtype == torch.float16


def test_dropout_with_add_softmax_adds_scales_and_drops():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    e = torch.exp(b + 0.125 * a)
    mask, softmax_out, output = ops.npu_dropout_with_add_softmax(a, b, 0.125, 0.0, -1)
    close(softmax_out, e / e.sum(-1, keepdim=True))
    close(output, softmax_out)
    assert bool(mask.all())
    mask, softmax_out, output = ops.npu_dropout_with_add_softmax(a, b, 0.125, 0.5, -1)
    close(output, torch.where(mask, softmax_out * 2, torch.zeros(())))
    assert 0 < int(mask.sum()) < mask.numel()


def test_softmax_cross_entropy_with_logits_row_by_row():
    logits, labels = torch.randn(3, 5), torch.softmax(torch.randn(3, 5), -1)
    want = [-sum(l * (z - math.log(sum(math.exp(t) for t in row))) for l, z in zip(lab, row))
            for row, lab in zip(logits.tolist(), labels.tolist())]
    close(ops.npu_softmax_cross_entropy_with_logits(logits, labels), torch.tensor(want))


def test_sort_max_min_against_python():
    x = torch.randn(3, 4)
    assert ops.npu_sort_v2(x).tolist() == [sorted(r) for r in x.tolist()]
    assert ops.npu_sort_v2(x, 0, True).t().tolist() == [sorted(c, reverse=True) for c in x.t().tolist()]
    values, indices = ops.npu_max(x, 1)
    assert values.tolist() == [max(r) for r in x.tolist()] and indices.tolist() == [r.index(max(r)) for r in x.tolist()]
    values, indices = ops.npu_min(x, 0, True)
    assert values.shape == (1, 4) and values[0].tolist() == [min(c) for c in x.t().tolist()]


def test_one_hot_as_documented():
    got = ops.npu_one_hot(torch.tensor([5, 3, 2, 1], dtype=torch.int32), depth=5)
    assert got.dtype == torch.float32
    assert got.tolist() == [[0.0] * 5, [0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]]
    axis0 = ops.npu_one_hot(torch.tensor([0, 2]), 0, 3, 2, -1)
    assert axis0.tolist() == [[2, -1], [-1, -1], [-1, 2]]


def test_giou_by_hand():
    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 2.0]]).t()  # x, y, w, h
    truth = torch.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 0.0, 2.0, 2.0], [3.0, 0.0, 2.0, 2.0]]).t()
    got = ops.npu_giou(boxes, truth, trans=True)
    assert got.shape == (3, 1)
    close(got[:, 0], torch.tensor([1.0, 1 / 3, -0.2]))  # same box; half overlap; a gap of 1
    with pytest.raises(RuntimeError, match="trans=True"):
        ops.npu_giou(boxes, truth)


def _diou_ciou_by_hand(box, truth):
    """(DIoU, CIoU) of two (x1, y1, x2, y2) boxes, term by term."""
    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = box, truth
    inter = max(0, min(ax2, bx2) - max(ax1, bx1)) * max(0, min(ay2, by2) - max(ay1, by1))
    iou = inter / ((ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter)
    centre = ((ax1 + ax2) / 2 - (bx1 + bx2) / 2) ** 2 + ((ay1 + ay2) / 2 - (by1 + by2) / 2) ** 2
    diagonal = (max(ax2, bx2) - min(ax1, bx1)) ** 2 + (max(ay2, by2) - min(ay1, by1)) ** 2
    v = 4 / math.pi**2 * (math.atan((bx2 - bx1) / (by2 - by1)) - math.atan((ax2 - ax1) / (ay2 - ay1))) ** 2
    diou = iou - centre / diagonal
    return diou, diou - v * v / (1 - iou + v)


def test_diou_and_ciou_pair_by_pair_and_cross():
    boxes = [[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 4.0, 2.0], [0.5, 0.0, 1.5, 3.0]]  # x1, y1, x2, y2
    truth = [[1.0, 0.0, 3.0, 1.0], [0.0, 0.5, 2.0, 2.5], [3.0, 3.0, 4.0, 5.0], [0.0, 0.0, 1.0, 1.0]]
    b, t = torch.tensor(boxes).t(), torch.tensor(truth).t()
    pairs = [_diou_ciou_by_hand(x, y) for x, y in zip(boxes, truth)]
    close(ops.npu_diou(b, t[:, :3]), torch.tensor([[d for d, _ in pairs]]))
    close(ops.npu_ciou(b, t[:, :3], is_cross=False), torch.tensor([[c for _, c in pairs]]))
    cross = [[_diou_ciou_by_hand(x, y) for x in boxes] for y in truth]
    close(ops.npu_diou(b, t, is_cross=True), torch.tensor([[d for d, _ in row] for row in cross]))
    close(ops.npu_ciou(b, t), torch.tensor([[c for _, c in row] for row in cross]))  # is_cross by default
    def xywh(c):
        return torch.stack(((c[0] + c[2]) / 2, (c[1] + c[3]) / 2, c[2] - c[0], c[3] - c[1]))
    close(ops.npu_diou(xywh(b), xywh(t[:, :3]), trans=True), ops.npu_diou(b, t[:, :3]))
    close(ops.npu_ciou(xywh(b), xywh(b), trans=True, is_cross=False), torch.ones(1, 3))
    with pytest.raises(NotImplementedError, match="IoF"):
        ops.npu_diou(b, b, mode=1)


def test_nms_v4_keeps_the_best_of_each_overlapping_group():
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [21, 20, 31, 30], [50, 50, 52, 52.0]])
    scores = torch.tensor([0.9, 0.8, 0.7, 0.95, 0.05])
    selected, valid = ops.npu_nms_v4(boxes, scores, 10, torch.tensor(0.5), torch.tensor(0.1))
    assert selected.tolist() == [3, 0] and int(valid) == 2 and selected.dtype == torch.int32
    padded, valid = ops.npu_nms_v4(boxes, scores, 4, torch.tensor(0.5), torch.tensor(0.0), True)
    assert padded.tolist() == [3, 0, 4, 0] and int(valid) == 3


def test_batch_nms_per_class_then_overall():
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30.0]]).reshape(1, 3, 1, 4)
    scores = torch.tensor([[[0.9, 0.1], [0.8, 0.6], [0.3, 0.7]]])
    nmsed_boxes, nmsed_scores, nmsed_classes, nmsed_num = ops.npu_batch_nms(boxes, scores, 0.2, 0.5, 2, 4)
    assert nmsed_num.tolist() == [4] and nmsed_num.dtype == torch.int32
    close(nmsed_scores[0], torch.tensor([0.9, 0.7, 0.6, 0.3]))
    assert nmsed_classes[0].tolist() == [0, 1, 1, 0]
    assert nmsed_boxes[0, :, 0].tolist() == [0, 20, 1, 20]
    few = ops.npu_batch_nms(boxes, scores, 0.65, 0.5, 2, 4)
    assert few[3].tolist() == [2] and few[1][0].tolist()[2:] == [0, 0] and few[0][0, 2:].abs().sum() == 0
    with pytest.raises(NotImplementedError, match="transpose_box"):
        ops.npu_batch_nms(boxes, scores, 0.2, 0.5, 2, 4, transpose_box=True)
