"""Tiny calls of every kernel in apis/npu_ops.py, for the tests that run each reference function,
each reference source alone and each template: one list of (args, kwargs) per kernel, at least
one positional and one by name where the kernel takes more than one parameter."""

from __future__ import annotations

import torch


def _g(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _boxes_xyxy(n, seed=0):
    corner = torch.rand(n, 2, generator=torch.Generator().manual_seed(seed)) * 4
    size = torch.rand(n, 2, generator=torch.Generator().manual_seed(seed + 1)) * 3 + 0.5
    return torch.cat((corner, corner + size), dim=-1)


def _xywh_columns(n, seed=0):
    centre = torch.rand(2, n, generator=torch.Generator().manual_seed(seed)) * 4
    size = torch.rand(2, n, generator=torch.Generator().manual_seed(seed + 1)) * 2 + 0.5
    return torch.cat((centre, size))


CASES: dict[str, list[tuple[tuple, dict]]] = {
    "npu_format_cast": [((_g(2, 3), 29), {}), ((), {"input": _g(2, 3), "acl_format": 2})],
    "npu_format_cast_": [((_g(2, 3), 29), {})],
    "npu_confusion_transpose": [
        ((_g(2, 3, 4, 6), (0, 2, 1, 3), (2, 4, 18), True), {}),
        ((_g(2, 3, 4, 6), (0, 2, 1), (2, 12, 6)), {"transpose_first": False}),
    ],
    "npu_transpose": [((_g(2, 3, 5), (2, 0, 1)), {}), ((_g(2, 3, 5),), {"perm": (1, 0, 2), "require_contiguous": False})],
    "npu_broadcast": [((_g(1, 3), (4, 3)), {}), ((), {"input": _g(3, 1), "size": [3, 2]})],
    "npu_dtype_cast": [((_g(2, 3), torch.float16), {}), ((_g(2, 3),), {"dtype": torch.float64})],
    "npu_linear": [((_g(4, 3), _g(5, 3, seed=1)), {}), ((_g(4, 3), _g(5, 3, seed=1)), {"bias": _g(5, seed=2)})],
    "npu_bmmV2": [((_g(2, 3, 4), _g(2, 4, 5, seed=1), [2, 3, 5]), {}),
                  ((), {"input": _g(2, 3, 4), "mat2": _g(2, 4, 5, seed=1), "output_sizes": []})],
    "npu_rms_norm": [((_g(2, 3, 8), _g(8, seed=1)), {}), ((_g(2, 3, 8), _g(3, 8, seed=1)), {"epsilon": 1e-3})],
    "npu_layer_norm_eval": [((_g(2, 6), [6]), {}),
                            ((_g(2, 6), [6], _g(6, seed=1)), {"bias": _g(6, seed=2), "eps": 1e-3})],
    "npu_gelu": [((_g(10),), {}), ((_g(10),), {"approximate": "tanh"})],
    "npu_fast_gelu": [((_g(10),), {})],
    "fast_gelu": [((_g(10),), {})],
    "npu_silu": [((_g(10),), {})],
    "npu_silu_": [((_g(10),), {})],
    "npu_mish": [((_g(10),), {})],
    "npu_swiglu": [((_g(3, 8),), {}), ((_g(4, 3),), {"dim": 0})],
    "npu_fusion_attention": [
        ((_g(2, 2, 4, 8), _g(2, 2, 6, 8, seed=1), _g(2, 2, 6, 8, seed=2), 2, "BNSD"), {"scale": 0.3}),
        ((_g(2, 4, 16), _g(2, 4, 16, seed=1), _g(2, 4, 16, seed=2), 2, "BSH"),
         {"atten_mask": torch.ones(4, 4, dtype=torch.bool).triu(1), "scale": 0.25}),
    ],
    "npu_rotary_mul": [((_g(1, 2, 3, 8), _g(1, 1, 3, 8, seed=1), _g(1, 1, 3, 8, seed=2)), {}),
                       ((_g(1, 2, 3, 8), _g(1, 1, 3, 8, seed=1), _g(1, 1, 3, 8, seed=2)), {"rotary_mode": "interleave"})],
    "npu_scaled_masked_softmax": [((_g(1, 2, 4, 4), torch.eye(4, dtype=torch.bool)), {}),
                                  ((_g(1, 2, 4, 4), torch.zeros(4, 4, dtype=torch.bool)), {"scale": 0.5, "fixed_triu_mask": True})],
    "npu_dropout_with_add_softmax": [((_g(2, 3, 4), _g(2, 3, 4, seed=1), 0.125, 0.0, -1), {})],
    "npu_softmax_cross_entropy_with_logits": [((_g(3, 5), torch.softmax(_g(3, 5, seed=1), -1)), {}),
                                              ((), {"input": _g(3, 5), "labels": torch.eye(5)[:3]})],
    "npu_sort_v2": [((_g(3, 4),), {}), ((_g(3, 4),), {"dim": 0, "descending": True})],
    "npu_max": [((_g(3, 4), 1), {}), ((_g(3, 4),), {"dim": 0, "keepdim": True})],
    "npu_min": [((_g(3, 4), 1), {}), ((_g(3, 4),), {"dim": 0, "keepdim": True})],
    "npu_one_hot": [((torch.tensor([5, 3, 2, 1]),), {"depth": 5}),
                    ((torch.tensor([[0, 1], [2, 0]]), 0, 3), {"on_value": 2, "off_value": -1})],
    "npu_giou": [((_xywh_columns(5), _xywh_columns(5, seed=3)), {"trans": True})],
    "npu_diou": [((_xywh_columns(5), _xywh_columns(5, seed=3)), {"trans": True}),
                 ((_xywh_columns(3), _xywh_columns(4, seed=3), True, True), {})],
    "npu_ciou": [((_xywh_columns(3), _xywh_columns(4, seed=3), True), {}),
                 ((_xywh_columns(5), _xywh_columns(5, seed=3)), {"trans": True, "is_cross": False})],
    "npu_nms_v4": [((_boxes_xyxy(6), torch.rand(6, generator=torch.Generator().manual_seed(4)), 4,
                     torch.tensor(0.3), torch.tensor(0.1)), {}),
                   ((_boxes_xyxy(6), torch.rand(6, generator=torch.Generator().manual_seed(4)), 4,
                     torch.tensor(0.3), torch.tensor(0.1)), {"pad_to_max_output_size": True})],
    "npu_batch_nms": [((_boxes_xyxy(5).reshape(1, 5, 1, 4), torch.rand(1, 5, 2, generator=torch.Generator().manual_seed(5)),
                        0.2, 0.4, 3, 4), {})],
}
