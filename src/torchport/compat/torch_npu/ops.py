"""torch_npu's fused kernels as the torch code they compute: the one place that code is written.

`torchport run`'s stand-in torch_npu calls these; `migrate --from npu` writes a helper's source
into a migrated file as it stands here (apis/npu_ops.reference_source), so each function is
self-contained: it names torch by its full dotted path and uses nothing else of this module.
Signatures are torch_npu's (a schema's `self` is `input`, as torch_npu's Python bindings name it);
where the sources say more than a signature, apis/npu_ops.py cites them.
"""

from __future__ import annotations

import torch


def npu_format_cast(input, acl_format):
    # an NPU storage layout (NCHW, NC1HWC0, FRACTAL_NZ...): elsewhere a tensor has one layout
    return input


def npu_format_cast_(input, acl_format):
    return input


def npu_linear(input, weight, bias=None):
    return torch.nn.functional.linear(input, weight, bias)


def npu_bmmV2(input, mat2, output_sizes):
    # output_sizes only told the NPU kernel the shape it would produce
    return torch.matmul(input, mat2)


def npu_confusion_transpose(input, perm, shape, transpose_first):
    if transpose_first:
        return torch.reshape(torch.permute(input, perm), shape)
    return torch.permute(torch.reshape(input, shape), perm)


def npu_transpose(input, perm, require_contiguous=True):
    return torch.permute(input, perm).contiguous()


def npu_broadcast(input, size):
    return torch.broadcast_to(input, size).contiguous()


def npu_dtype_cast(input, dtype):
    return input.to(dtype)


def npu_gelu(input, *, approximate="none"):
    return torch.nn.functional.gelu(input, approximate=approximate)


def npu_fast_gelu(input):
    # torch_npu's formula x / (1 + exp(-1.702|x|)) * exp(0.851(x - |x|)) is x * sigmoid(1.702x)
    return input * torch.sigmoid(1.702 * input)


def fast_gelu(input):
    # torch_npu's older name of npu_fast_gelu
    return input * torch.sigmoid(1.702 * input)


def npu_silu(input):
    return torch.nn.functional.silu(input)


def npu_silu_(input):
    return torch.nn.functional.silu(input, inplace=True)


def npu_mish(input):
    return torch.nn.functional.mish(input)


def npu_swiglu(input, dim=-1):
    gate, up = torch.chunk(input, 2, dim=dim)
    return torch.nn.functional.silu(gate) * up


def npu_rms_norm(input, gamma, epsilon=1e-06):
    """Returns (y, rstd): rstd = 1 / sqrt(mean(x^2) + epsilon) over gamma's dimensions, float32,
    kept as size-1 dimensions."""
    x = input.float()
    dims = tuple(range(-gamma.dim(), 0))
    rstd = torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + epsilon)
    return (x * rstd * gamma.float()).to(input.dtype), rstd


def npu_layer_norm_eval(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    return torch.nn.functional.layer_norm(input, normalized_shape, weight, bias, eps)


def npu_rotary_mul(input, r1, r2, rotary_mode="half"):
    """Rotary position embedding: input * r1 + rotate(input) * r2 (r1 = cos, r2 = sin)."""
    if rotary_mode == "half":
        first, second = torch.chunk(input, 2, dim=-1)
        rotated = torch.cat((-second, first), dim=-1)
    elif rotary_mode == "interleave":
        rotated = torch.stack((-input[..., 1::2], input[..., ::2]), dim=-1).flatten(-2)
    else:
        raise ValueError(f"npu_rotary_mul: rotary_mode must be 'half' or 'interleave', not {rotary_mode!r}")
    return input * r1 + rotated * r2


def npu_softmax_cross_entropy_with_logits(input, labels):
    return torch.sum(torch.mul(torch.log_softmax(input, dim=-1), labels), dim=-1).neg()


def npu_scaled_masked_softmax(x, mask, scale=1, fixed_triu_mask=False):
    """softmax over the last dimension of x * scale, where mask is True set to -10000 (Megatron's
    attention_mask_func, which this kernel replaces); fixed_triu_mask: mask the upper triangle."""
    if fixed_triu_mask:
        mask = torch.ones(x.shape[-2:], dtype=torch.bool, device=x.device).triu(diagonal=1)
    scores = (x.float() * scale).masked_fill(mask.bool(), -10000.0)
    return torch.softmax(scores, dim=-1).to(x.dtype)


def npu_dropout_with_add_softmax(input, x1, alpha, prob, dim):
    """Returns (mask, softmax_out, output): softmax(x1 + input * alpha) along dim, then dropout
    with drop probability prob; mask: True where an element was kept (torch_npu packs it in bits)."""
    softmax_out = torch.softmax(x1 + input * alpha, dim=dim)
    mask = torch.rand_like(softmax_out) >= prob
    output = softmax_out * mask / (1.0 - prob) if prob < 1 else torch.zeros_like(softmax_out)
    return mask, softmax_out, output


def npu_sort_v2(input, dim=-1, descending=False):
    return torch.sort(input, dim=dim, descending=descending).values


def npu_max(input, dim, keepdim=False):
    return torch.max(input, dim, keepdim)


def npu_min(input, dim, keepdim=False):
    return torch.min(input, dim, keepdim)


def npu_one_hot(input, num_classes=-1, depth=1, on_value=1, off_value=0):
    """float32 one-hot of `depth` classes along axis `num_classes` (torch_npu names the axis so);
    an index outside [0, depth) gives a row of off_value."""
    hot = input.long().unsqueeze(-1) == torch.arange(depth, device=input.device)
    out = torch.where(hot, float(on_value), float(off_value))
    return out if num_classes == -1 else out.movedim(-1, num_classes)


def npu_giou(input, gtboxes, trans=False, is_cross=False, mode=0):
    """GIoU of aligned box pairs given as (4, n) columns of x, y, w, h; returns (n, 1). torch_npu
    computes only trans=True, is_cross=False, mode=0 (IoU) and refuses the rest, as this does."""
    if not (trans and not is_cross and mode == 0):
        raise RuntimeError("npu_giou supports only trans=True, is_cross=False, mode=0, as torch_npu does")
    b1, b2 = input.float(), gtboxes.float()
    x1, y1, x2, y2 = b1[0] - b1[2] / 2, b1[1] - b1[3] / 2, b1[0] + b1[2] / 2, b1[1] + b1[3] / 2
    gx1, gy1, gx2, gy2 = b2[0] - b2[2] / 2, b2[1] - b2[3] / 2, b2[0] + b2[2] / 2, b2[1] + b2[3] / 2
    inter = (torch.min(x2, gx2) - torch.max(x1, gx1)).clamp(min=0) * (torch.min(y2, gy2) - torch.max(y1, gy1)).clamp(min=0)
    union = b1[2] * b1[3] + b2[2] * b2[3] - inter
    enclose = (torch.max(x2, gx2) - torch.min(x1, gx1)) * (torch.max(y2, gy2) - torch.min(y1, gy1))
    giou = inter / union - (enclose - union) / enclose
    return giou.unsqueeze(-1).to(input.dtype)


def npu_diou(input, gtboxes, trans=False, is_cross=False, mode=0):
    """DIoU = IoU - (distance of the centres)^2 / (diagonal of the enclosing box)^2, boxes given as
    (4, n) columns (x, y, w, h when trans, else x1, y1, x2, y2): pairs -> (1, n); is_cross: each
    of gtboxes' m boxes against each box -> (m, n)."""
    if mode != 0:
        raise NotImplementedError("npu_diou: mode=1 (IoF) has no torch reference here")

    def corners(b):
        b = b.float()
        return (b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2) if trans else tuple(b)

    x1, y1, x2, y2 = corners(input)
    gx1, gy1, gx2, gy2 = (c[:, None] if is_cross else c for c in corners(gtboxes))
    inter = (torch.min(x2, gx2) - torch.max(x1, gx1)).clamp(min=0) * (torch.min(y2, gy2) - torch.max(y1, gy1)).clamp(min=0)
    union = (x2 - x1) * (y2 - y1) + (gx2 - gx1) * (gy2 - gy1) - inter
    centres = ((x1 + x2 - gx1 - gx2) ** 2 + (y1 + y2 - gy1 - gy2) ** 2) / 4
    diagonal = (torch.max(x2, gx2) - torch.min(x1, gx1)) ** 2 + (torch.max(y2, gy2) - torch.min(y1, gy1)) ** 2
    diou = inter / union - centres / diagonal
    return (diou if is_cross else diou.unsqueeze(0)).to(input.dtype)


def npu_ciou(input, gtboxes, trans=False, is_cross=True, mode=0, atan_sub_flag=False):
    """CIoU = DIoU - alpha * v, v = 4 / pi^2 * (atan(w_gt / h_gt) - atan(w / h))^2,
    alpha = v / (1 - IoU + v); boxes and shapes as npu_diou's. atan_sub_flag only shapes what
    torch_npu keeps for its backward kernel."""
    if mode != 0:
        raise NotImplementedError("npu_ciou: mode=1 (IoF) has no torch reference here")

    def corners(b):
        b = b.float()
        return (b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2) if trans else tuple(b)

    x1, y1, x2, y2 = corners(input)
    gx1, gy1, gx2, gy2 = (c[:, None] if is_cross else c for c in corners(gtboxes))
    inter = (torch.min(x2, gx2) - torch.max(x1, gx1)).clamp(min=0) * (torch.min(y2, gy2) - torch.max(y1, gy1)).clamp(min=0)
    union = (x2 - x1) * (y2 - y1) + (gx2 - gx1) * (gy2 - gy1) - inter
    iou = inter / union
    centres = ((x1 + x2 - gx1 - gx2) ** 2 + (y1 + y2 - gy1 - gy2) ** 2) / 4
    diagonal = (torch.max(x2, gx2) - torch.min(x1, gx1)) ** 2 + (torch.max(y2, gy2) - torch.min(y1, gy1)) ** 2
    v = 4 / torch.pi ** 2 * (torch.atan((gx2 - gx1) / (gy2 - gy1)) - torch.atan((x2 - x1) / (y2 - y1))) ** 2
    ciou = iou - centres / diagonal - v / (1 - iou + v).clamp(min=1e-7) * v  # alpha * v is 0, not 0/0, for equal boxes
    return (ciou if is_cross else ciou.unsqueeze(0)).to(input.dtype)


def npu_nms_v4(input, scores, max_output_size, iou_threshold, scores_threshold, pad_to_max_output_size=False):
    """Greedy NMS of boxes (n, 4) as (x1, y1, x2, y2) (or y, x: the same IoU): keeps scores above
    scores_threshold, drops a box whose IoU with a kept one is above iou_threshold. Returns
    (selected_indices int32, valid_outputs int32), the indices padded with 0 to max_output_size
    when pad_to_max_output_size."""
    lt = torch.max(input[:, None, :2], input[None, :, :2])
    rb = torch.min(input[:, None, 2:], input[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = (input[:, 2:] - input[:, :2]).clamp(min=0).prod(-1)
    iou = inter / (area[:, None] + area[None, :] - inter).clamp(min=1e-12)
    kept = []
    for i in torch.argsort(scores, descending=True, stable=True).tolist():
        if len(kept) == int(max_output_size) or scores[i] <= float(scores_threshold):
            break
        if all(iou[i, j] <= float(iou_threshold) for j in kept):
            kept.append(i)
    size = int(max_output_size) if pad_to_max_output_size else len(kept)
    selected = torch.zeros(size, dtype=torch.int32, device=input.device)
    selected[: len(kept)] = torch.tensor(kept, dtype=torch.int32, device=input.device)
    return selected, torch.tensor(len(kept), dtype=torch.int32, device=input.device)


def npu_batch_nms(input, scores, score_threshold, iou_threshold, max_size_per_class, max_total_size,
                  change_coordinate_frame=False, transpose_box=False):
    """Per-class greedy NMS over a batch (TensorFlow's combined_non_max_suppression): boxes
    (batch, n, q, 4) with q = 1 or one per class, scores (batch, n, classes). Returns nmsed_boxes
    (batch, max_total_size, 4), nmsed_scores and nmsed_classes (batch, max_total_size), zero-padded,
    and nmsed_num (batch,) int32. change_coordinate_frame normalises to the clip window, which is
    the unit square here: no change."""
    if transpose_box:
        raise NotImplementedError("npu_batch_nms: transpose_box=True (boxes laid out 4 x n) has no torch reference here")
    batch, classes = scores.shape[0], scores.shape[2]
    nmsed_boxes = input.new_zeros(batch, max_total_size, 4)
    nmsed_scores = scores.new_zeros(batch, max_total_size)
    nmsed_classes = scores.new_zeros(batch, max_total_size)
    nmsed_num = torch.zeros(batch, dtype=torch.int32, device=scores.device)
    for b in range(batch):
        found = []  # (score, class, box)
        for c in range(classes):
            boxes, box_scores = input[b, :, c if input.shape[2] > 1 else 0], scores[b, :, c]
            lt = torch.max(boxes[:, None, :2], boxes[None, :, :2])
            rb = torch.min(boxes[:, None, 2:], boxes[None, :, 2:])
            inter = (rb - lt).clamp(min=0).prod(-1)
            area = (boxes[:, 2:] - boxes[:, :2]).clamp(min=0).prod(-1)
            iou = inter / (area[:, None] + area[None, :] - inter).clamp(min=1e-12)
            kept = []
            for i in torch.argsort(box_scores, descending=True, stable=True).tolist():
                if len(kept) == max_size_per_class or box_scores[i] <= score_threshold:
                    break
                if all(iou[i, j] <= iou_threshold for j in kept):
                    kept.append(i)
            found += [(float(box_scores[i]), c, boxes[i]) for i in kept]
        found = sorted(found, key=lambda row: -row[0])[:max_total_size]
        for k, (score, c, box) in enumerate(found):
            nmsed_boxes[b, k], nmsed_scores[b, k], nmsed_classes[b, k] = box, score, c
        nmsed_num[b] = len(found)
    return nmsed_boxes, nmsed_scores, nmsed_classes, nmsed_num


def npu_fusion_attention(query, key, value, head_num, input_layout, pse=None, padding_mask=None,
                         atten_mask=None, scale=1.0, keep_prob=1.0, pre_tockens=2147483647,
                         next_tockens=2147483647, inner_precise=0, prefix=None, actual_seq_qlen=None,
                         actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False,
                         softmax_layout=""):
    """torch_npu's flash attention: Dropout(Softmax(Mask(scale * (pse + Q K^T), atten_mask)),
    keep_prob) V, in layout BNSD, BSND, BSH or SBH; key/value may have fewer heads (GQA).
    atten_mask True (or 1) means masked out: the opposite of scaled_dot_product_attention's bool mask.
    sparse_mode 0/1: atten_mask as given; 2: causal from the top left; 3: causal from the bottom
    right; 4: the band pre_tockens/next_tockens from the bottom right (2-4 ignore the content of the
    compressed mask torch_npu takes). With no atten_mask every position counts, whatever sparse_mode.
    Returns torch_npu's 7-tuple (attention_out, softmax_max, softmax_sum, softmax_out, seed, offset,
    numels); the rest only feed torch_npu's own backward kernel: softmax_max and softmax_sum are
    zeros of its shape (B, N, Sq, 8) float32, softmax_out is empty, seed, offset and numels are 0."""
    if input_layout not in ("BNSD", "BSND", "BSH", "SBH"):
        raise NotImplementedError(f"npu_fusion_attention: input_layout {input_layout!r} (varlen TND) has no torch reference here")
    if sparse_mode not in (0, 1, 2, 3, 4) or prefix is not None:
        raise NotImplementedError(f"npu_fusion_attention: sparse_mode {sparse_mode} (prefix or varlen) has no torch reference here")

    def to_bnsd(t, heads):
        if input_layout == "BSND":
            return t.transpose(1, 2)
        if input_layout == "BSH":
            return t.unflatten(-1, (heads, -1)).transpose(1, 2)
        if input_layout == "SBH":
            return t.unflatten(-1, (heads, -1)).permute(1, 2, 0, 3)
        return t

    kv_heads = key.shape[-1] // (query.shape[-1] // head_num) if input_layout in ("BSH", "SBH") else None
    q, k, v = to_bnsd(query, head_num), to_bnsd(key, kv_heads), to_bnsd(value, kv_heads)
    sq, skv = q.shape[-2], k.shape[-2]
    masked = None
    if atten_mask is not None and sparse_mode in (0, 1):
        masked = atten_mask.bool()
    elif atten_mask is not None:
        row = torch.arange(sq, device=q.device)[:, None] + (0 if sparse_mode == 2 else skv - sq)
        col = torch.arange(skv, device=q.device)[None, :]
        masked = (col > row + next_tockens) | (col < row - pre_tockens) if sparse_mode == 4 else col > row
    attn_mask = None if masked is None else ~masked
    if pse is not None:
        attn_mask = pse.to(q.dtype) * scale
        if masked is not None:
            attn_mask = attn_mask.masked_fill(masked, float("-inf"))
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, dropout_p=1.0 - keep_prob, scale=scale,
        enable_gqa=q.shape[1] != k.shape[1])
    if input_layout == "BSND":
        out = out.transpose(1, 2)
    elif input_layout == "BSH":
        out = out.transpose(1, 2).flatten(2)
    elif input_layout == "SBH":
        out = out.permute(2, 0, 1, 3).flatten(2)
    softmax_stat = torch.zeros(q.shape[0], q.shape[1], sq, 8, dtype=torch.float32, device=q.device)
    return out, softmax_stat, softmax_stat.clone(), torch.empty(0, dtype=query.dtype, device=query.device), 0, 0, 0
