"""What torch_npu's fused kernels (`torch_npu.npu_*`) compute, as the torch code that computes it:
the knowledge that `migrate --from npu` writes into a file and that `run`'s stand-in torch_npu
(torchport.compat.torch_npu) calls.

Each kernel is either *inline* (one torch expression takes its place where it is called: a
template over its parameters) or a *helper* (its reference function, in
torchport/compat/torch_npu/ops.py, is written once into the migrated file, and the call keeps its
arguments). Every kernel has a reference function, the inline ones too (the stand-in calls them;
tests/compat/test_torch_npu_ops.py checks each template against its function). The reference
functions are the one place the computation is written: migrate reads their source from that file
(with `ast`, never importing torch), the stand-in imports them.

Template rules (what a converter may rely on):
- a placeholder `{parameter}` stands where any expression may stand (a whole call argument, or in
  parentheses), so an argument is substituted as written;
- a parameter appears at most once, unless it is listed in `repeated`: such a template may be used
  only where each of those arguments is a plain name or attribute chain (evaluating it twice is
  harmless, and it may stand anywhere), else the call goes to the helper;
- a parameter a template does not name is dropped: its value does not change the result
  (npu_format_cast's acl_format, npu_bmmV2's output_sizes, npu_transpose's require_contiguous);
- `inline_when` holds templates that apply only where a parameter is given as one literal
  (npu_confusion_transpose's transpose_first=True/False); any other argument: the helper.

Sources (Ascend/op-plugin and Ascend/pytorch, read for the facts only):
- signatures and defaults: op-plugin op_plugin/config/op_plugin_functions.yaml (the `npu_*` schemas;
  a schema's `self` is `input` in torch_npu's Python bindings, as its docs write it);
  npu_format_cast from torch_npu's npu_native_functions.yaml; every name here is one of torch_npu
  2.14.0's own operators (targets/data/kernels-torch_npu-2.14.0.json, "custom");
- meanings: torch_npu/meta/_meta_registrations.py (npu_rms_norm's rstd: float32, gamma's
  dimensions kept as 1), op-plugin docs/context/torch_npu-npu_fusion_attention.md (layouts, atten_mask 1 =
  not computed, sparse_mode table, the 7 outputs), torch_npu-npu_rotary_mul.md (half/interleave),
  op_plugin/ops/aclops/GiouKernelNpu.cpp ((4, n) boxes, only trans=True/is_cross=False/mode=0,
  (n, 1) out), DiouKernelNpu.cpp and CiouKernelNpu.cpp ((4, n) boxes, (1, n) or (m, n) out),
  op-plugin test/test_base_ops/test_dropout_with_add_softmax.py and
  torch_npu/contrib/function/fuse_add_softmax_dropout.py (prob is the drop probability), and the
  hiascend.com API pages of npu_batch_nms, npu_confusion_transpose, npu_scaled_masked_softmax,
  npu_transpose, npu_fast_gelu, npu_giou.

No torch at import, no LibCST.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

PACKAGE = "torch_npu"
# where the reference functions live, read as text (compat/torch_npu/ops.py)
REFERENCE_FILE = Path(__file__).resolve().parent.parent / "compat" / "torch_npu" / "ops.py"


@dataclass(frozen=True)
class NpuOp:
    name: str  # "npu_linear": torch_npu.npu_linear
    parameters: tuple[str, ...]  # torch_npu's, in order
    defaults: dict[str, str] = field(default_factory=dict)  # parameter -> its default, as source
    inline: str | None = None  # "torch.nn.functional.linear({input}, {weight}, {bias})"; None: a helper
    # the expression that stands for `call[0]`, for a kernel that returns a tuple of which code
    # mostly keeps the first (npu_rms_norm's (y, rstd)); None: no such form
    inline_first: str | None = None
    note: str = ""  # what the report row says of the replacement
    # parameters a template names more than once: inline only where each is a plain name/attribute
    repeated: tuple[str, ...] = ()
    # parameter -> {literal as source -> template}: templates for a call that gives it that literal
    inline_when: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def qualified(self) -> str:
        return f"{PACKAGE}.{self.name}"


_FUSION_ATTENTION_PARAMETERS = (
    "query", "key", "value", "head_num", "input_layout", "pse", "padding_mask", "atten_mask",
    "scale", "keep_prob", "pre_tockens", "next_tockens", "inner_precise", "prefix",
    "actual_seq_qlen", "actual_seq_kvlen", "sparse_mode", "gen_mask_parallel", "sync",
    "softmax_layout")
_FUSION_ATTENTION_DEFAULTS = {
    "pse": "None", "padding_mask": "None", "atten_mask": "None", "scale": "1.0", "keep_prob": "1.0",
    "pre_tockens": "2147483647", "next_tockens": "2147483647", "inner_precise": "0",
    "prefix": "None", "actual_seq_qlen": "None", "actual_seq_kvlen": "None", "sparse_mode": "0",
    "gen_mask_parallel": "True", "sync": "False", "softmax_layout": '""'}

NPU_OPS: dict[str, NpuOp] = {op.name: op for op in (
    # layout and shape
    NpuOp("npu_format_cast", ("input", "acl_format"), inline="{input}",
          note="a storage-layout cast on the NPU; the same tensor elsewhere"),
    NpuOp("npu_format_cast_", ("input", "acl_format"), inline="{input}",
          note="an in-place storage-layout cast on the NPU; nothing to do elsewhere"),
    NpuOp("npu_confusion_transpose", ("input", "perm", "shape", "transpose_first"),
          inline_when={"transpose_first": {
              "True": "torch.reshape(torch.permute({input}, {perm}), {shape})",
              "False": "torch.permute(torch.reshape({input}, {shape}), {perm})"}},
          note="permute then reshape (transpose_first) or reshape then permute"),
    NpuOp("npu_transpose", ("input", "perm", "require_contiguous"), {"require_contiguous": "True"},
          inline="torch.permute({input}, {perm}).contiguous()"),
    NpuOp("npu_broadcast", ("input", "size"), inline="torch.broadcast_to({input}, {size}).contiguous()"),
    NpuOp("npu_dtype_cast", ("input", "dtype"), inline="({input}).to({dtype})"),
    # matrix products and norms
    NpuOp("npu_linear", ("input", "weight", "bias"), {"bias": "None"},
          inline="torch.nn.functional.linear({input}, {weight}, {bias})"),
    NpuOp("npu_bmmV2", ("input", "mat2", "output_sizes"), inline="torch.matmul({input}, {mat2})",
          note="a batched matmul; output_sizes only told the NPU kernel its result's shape"),
    NpuOp("npu_rms_norm", ("input", "gamma", "epsilon"), {"epsilon": "1e-06"},
          inline_first="torch.nn.functional.rms_norm({input}, {gamma}.shape, {gamma}, {epsilon})",
          repeated=("gamma",), note="RMSNorm; returns (y, rstd)"),
    NpuOp("npu_layer_norm_eval", ("input", "normalized_shape", "weight", "bias", "eps"),
          {"weight": "None", "bias": "None", "eps": "1e-05"},
          inline="torch.nn.functional.layer_norm({input}, {normalized_shape}, {weight}, {bias}, {eps})"),
    # activations
    NpuOp("npu_gelu", ("input", "approximate"), {"approximate": "'none'"},
          inline="torch.nn.functional.gelu({input}, approximate={approximate})"),
    NpuOp("npu_fast_gelu", ("input",), inline="{input} * torch.sigmoid(1.702 * {input})",
          repeated=("input",), note="fast GELU: x * sigmoid(1.702 x)"),
    NpuOp("fast_gelu", ("input",), inline="{input} * torch.sigmoid(1.702 * {input})",
          repeated=("input",), note="fast GELU (torch_npu's older name): x * sigmoid(1.702 x)"),
    NpuOp("npu_silu", ("input",), inline="torch.nn.functional.silu({input})"),
    NpuOp("npu_silu_", ("input",), inline="torch.nn.functional.silu({input}, inplace=True)"),
    NpuOp("npu_mish", ("input",), inline="torch.nn.functional.mish({input})"),
    NpuOp("npu_swiglu", ("input", "dim"), {"dim": "-1"}, note="SwiGLU: silu(first half) * second half"),
    # attention and softmax
    NpuOp("npu_fusion_attention", _FUSION_ATTENTION_PARAMETERS, _FUSION_ATTENTION_DEFAULTS,
          note="flash attention by scaled_dot_product_attention (atten_mask True = masked out); "
               "softmax_max/softmax_sum come back as zeros"),
    NpuOp("npu_rotary_mul", ("input", "r1", "r2", "rotary_mode"), {"rotary_mode": "'half'"},
          note="rotary embedding: x * cos + rotate(x) * sin"),
    NpuOp("npu_scaled_masked_softmax", ("x", "mask", "scale", "fixed_triu_mask"),
          {"scale": "1", "fixed_triu_mask": "False"}, note="softmax of x * scale, masked where mask is True"),
    NpuOp("npu_dropout_with_add_softmax", ("input", "x1", "alpha", "prob", "dim"),
          note="dropout(softmax(x1 + input * alpha)); returns (mask, softmax_out, output)"),
    NpuOp("npu_softmax_cross_entropy_with_logits", ("input", "labels"),
          inline="torch.sum(torch.mul(torch.log_softmax({input}, dim=-1), {labels}), dim=-1).neg()"),
    # reductions and indexing
    NpuOp("npu_sort_v2", ("input", "dim", "descending"), {"dim": "-1", "descending": "False"},
          inline="torch.sort({input}, dim={dim}, descending={descending}).values"),
    NpuOp("npu_max", ("input", "dim", "keepdim"), {"keepdim": "False"},
          inline="torch.max({input}, {dim}, {keepdim})", note="indices come back int64"),
    NpuOp("npu_min", ("input", "dim", "keepdim"), {"keepdim": "False"},
          inline="torch.min({input}, {dim}, {keepdim})", note="indices come back int64"),
    NpuOp("npu_one_hot", ("input", "num_classes", "depth", "on_value", "off_value"),
          {"num_classes": "-1", "depth": "1", "on_value": "1", "off_value": "0"}),
    # detection
    NpuOp("npu_giou", ("input", "gtboxes", "trans", "is_cross", "mode"),
          {"trans": "False", "is_cross": "False", "mode": "0"}, note="GIoU of aligned (4, n) xywh boxes"),
    NpuOp("npu_diou", ("input", "gtboxes", "trans", "is_cross", "mode"),
          {"trans": "False", "is_cross": "False", "mode": "0"}, note="DIoU of (4, n) boxes"),
    NpuOp("npu_ciou", ("input", "gtboxes", "trans", "is_cross", "mode", "atan_sub_flag"),
          {"trans": "False", "is_cross": "True", "mode": "0", "atan_sub_flag": "False"},
          note="CIoU of (4, n) boxes"),
    NpuOp("npu_nms_v4", ("input", "scores", "max_output_size", "iou_threshold", "scores_threshold",
                         "pad_to_max_output_size"), {"pad_to_max_output_size": "False"},
          note="greedy NMS in torch (no torchvision)"),
    NpuOp("npu_batch_nms", ("input", "scores", "score_threshold", "iou_threshold", "max_size_per_class",
                            "max_total_size", "change_coordinate_frame", "transpose_box"),
          {"change_coordinate_frame": "False", "transpose_box": "False"},
          note="per-class greedy NMS over a batch in torch (no torchvision)"),
)}

# ModelZoo kernels with no reference here, and why (a converter reports them as they stand)
LEFT_OUT: dict[str, str] = {
    "npu_iou": "whether the NPU's Iou adds 1 to widths and heights (and npu_ptiou does not) is not "
               "documented",
    "npu_ptiou": "as npu_iou",
    "npu_stride_add": "adds along the C1 axis of the NPU's 5HD layout (offset1, offset2, c1_len), "
                      "which has no counterpart elsewhere",
    "npu_incre_flash_attention": "inference-only, with quantisation and paged-KV parameters",
    "npu_prompt_flash_attention": "inference-only, with quantisation parameters and its own "
                                  "pre/next_tokens defaults",
    "npu_fused_infer_attention_score": "inference-only, with quantisation and paged-KV parameters",
    "npu_bounding_box_decode": "mmdetection's delta2bbox with the NPU's clipping; not checked here",
    "npu_bounding_box_encode": "mmdetection's bbox2delta; not checked here",
    "npu_dropout_gen_mask": "the NPU's bit-packed dropout mask",
    "npu_dropout_do_mask": "the NPU's bit-packed dropout mask",
    "npu_lstm": "the NPU's packed LSTM weights and its 8 outputs",
    "npu_conv2d": "takes the NPU's padding list; F.conv2d does not",
}


@lru_cache(maxsize=None)
def reference_source(name: str) -> str:
    """The source of the reference function `name` (a def of compat/torch_npu/ops.py), as it is
    written into a migrated file."""
    text = REFERENCE_FILE.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node)
    raise KeyError(f"no reference function {name} in {REFERENCE_FILE.name}")
