"""The CUDA-only kernel packages of LLM-era training code (flash-attn, xformers, bitsandbytes and
the compiled extensions beside them): which names exist, what each becomes in native torch, and
what to do where torchport has no stand-in.

Read by `torchport run`'s stand-ins (torchport.compat.flash_attn, .xformers, .bitsandbytes, served
by runtime/patch_flash_attn.py, patch_xformers.py, patch_bitsandbytes.py) and by the finder that
turns an import of a package with no stand-in into one line naming the way out
(runtime/patch_cuda_only.py).

Sources (read for the facts only, not copied): flash-attention v2.6 `flash_attn/flash_attn_interface.py`
(signatures; causal masks aligned bottom-right since 2.1 when the query and key lengths differ;
window_size (left, right) counted from that diagonal), `flash_attn/modules/mha.py`,
`flash_attn/layers/rotary.py`, `flash_attn/losses/cross_entropy.py`; xformers 0.0.2x
`xformers/ops/fmha/__init__.py` and `fmha/attn_bias.py` (LowerTriangularMask is aligned top-left,
LowerTriangularFromBottomRightMask bottom-right), `xformers/ops/swiglu_op.py`; bitsandbytes 0.4x
`bitsandbytes/optim/{adam,adamw,lion,sgd,rmsprop,adagrad}.py` (constructor parameters and
defaults); the project pages of CUTLASS's CuTe DSL, QuACK, TileLang, TensorRT and Polygraphy (which
devices each builds for). ../shared/reference/modern.md has the call forms and the public threads.
No torch at import.
"""

from __future__ import annotations

from typing import NamedTuple

FLASH_ATTN = "flash_attn"
XFORMERS = "xformers"
BITSANDBYTES = "bitsandbytes"
ROTARY_EMB = "rotary_emb"  # flash-attn's csrc/rotary extension: one function, apply_rotary
DROPOUT_LAYER_NORM = "dropout_layer_norm"  # flash-attn's csrc/layer_norm extension (its plain forms)
XENTROPY = "xentropy_cuda_lib"  # flash-attn 1's (apex's) cross-entropy extension: forward and backward

# served name -> the stand-in package that answers for it
STAND_INS = {
    FLASH_ATTN: "torchport.compat.flash_attn",
    XFORMERS: "torchport.compat.xformers",
    BITSANDBYTES: "torchport.compat.bitsandbytes",
    ROTARY_EMB: "torchport.compat.rotary_emb",
    XENTROPY: "torchport.compat.xentropy_cuda_lib",
    DROPOUT_LAYER_NORM: "torchport.compat.dropout_layer_norm",
}

# Why each stand-in is served, for the log line of its import.
SERVED_WHY = {
    FLASH_ATTN: "flash-attn is not installed (a CUDA build): its attention on F.scaled_dot_product_attention, "
                "its norms, rotary and cross-entropy on torch",
    XFORMERS: "xformers is not installed (a CUDA build): memory_efficient_attention on "
              "F.scaled_dot_product_attention, SwiGLU on torch",
    BITSANDBYTES: "bitsandbytes is not installed (8-bit kernels are CUDA's): its optimizers are torch.optim's "
                  "32-bit ones with the same hyper-parameters; optimizer state takes 4x the memory of 8-bit state",
    ROTARY_EMB: "flash-attn's rotary extension is not installed: apply_rotary on torch",
    XENTROPY: "flash-attn's cross-entropy extension is not installed: its forward and backward on torch, in float32",
    DROPOUT_LAYER_NORM: "flash-attn's fused-norm extension is not installed: dropout, add and LayerNorm/RMSNorm "
                        "and their gradients on torch, in float32",
}

SDPA = "torch.nn.functional.scaled_dot_product_attention"

# flash_attn's attention functions, each with how the stand-in computes it (the log's note).
FLASH_ATTN_FUNCTIONS = {
    "flash_attn_func": "transposed to (B, H, S, D); causal mask aligned bottom-right as flash-attn >= 2.1",
    "flash_attn_qkvpacked_func": "qkv unpacked, then as flash_attn_func",
    "flash_attn_kvpacked_func": "kv unpacked, then as flash_attn_func",
    "flash_attn_varlen_func": "attention per segment of cu_seqlens",
    "flash_attn_varlen_qkvpacked_func": "qkv unpacked, then attention per segment of cu_seqlens",
    "flash_attn_varlen_kvpacked_func": "kv unpacked, then attention per segment of cu_seqlens",
}
# Arguments of flash-attn's the stand-in does not compute (a NotImplementedError naming them).
FLASH_ATTN_REFUSED = {
    "return_attn_probs": "flash-attn's attention probabilities are its kernel's own (dropout-scaled, "
                         "unnormalised): compute softmax(q k^T * scale) yourself where they are needed",
    "block_table": "the paged KV cache is an inference feature of the CUDA kernel",
}

XFORMERS_ATTENTION = "xformers.ops.memory_efficient_attention"
XFORMERS_BIASES = ("LowerTriangularMask", "LowerTriangularFromBottomRightMask", "LowerTriangularMaskWithTensorBias",
                   "BlockDiagonalMask", "BlockDiagonalCausalMask")


class BnbOptimizer(NamedTuple):
    """A bitsandbytes optimizer and the torch one that computes the same update in 32 bits.

    `parameters`: bitsandbytes' constructor parameters after `params`, in order, with their
    defaults (as Python values); `native`: the torch optimizer (a dotted name; "Lion" is the
    stand-in's own, torch has none); `passed`: which of `parameters` the native one takes (the
    others are bitsandbytes' quantisation and paging knobs, which change memory, not the math,
    except `percentile_clipping` below 100, which clips gradients: refused)."""

    native: str
    parameters: tuple[tuple[str, object], ...]
    passed: tuple[str, ...]
    bits: int  # the state's bits in bitsandbytes (8 or 32)
    paged: bool


_BNB_KNOBS = (("optim_bits", 32), ("args", None), ("min_8bit_size", 4096), ("percentile_clipping", 100),
              ("block_wise", True))
_ADAM = (("lr", 1e-3), ("betas", (0.9, 0.999)), ("eps", 1e-8))
_FAMILIES = {
    "Adam": ("torch.optim.Adam", (*_ADAM, ("weight_decay", 0), ("amsgrad", False))),
    "AdamW": ("torch.optim.AdamW", (*_ADAM, ("weight_decay", 1e-2), ("amsgrad", False))),
    "Lion": ("Lion", (("lr", 1e-4), ("betas", (0.9, 0.99)), ("weight_decay", 0))),
    "SGD": ("torch.optim.SGD", (("lr", None), ("momentum", 0), ("dampening", 0), ("weight_decay", 0),
                                ("nesterov", False))),
    "RMSprop": ("torch.optim.RMSprop", (("lr", 1e-2), ("alpha", 0.99), ("eps", 1e-8), ("weight_decay", 0),
                                        ("momentum", 0), ("centered", False))),
    "Adagrad": ("torch.optim.Adagrad", (("lr", 1e-2), ("lr_decay", 0), ("weight_decay", 0),
                                        ("initial_accumulator_value", 0), ("eps", 1e-10))),
}
_PAGED = ("Adam", "AdamW", "Lion")  # the families bitsandbytes has Paged* forms of


def _bnb_optimizers() -> dict[str, BnbOptimizer]:
    table = {}
    for family, (native, parameters) in _FAMILIES.items():
        passed = tuple(name for name, _ in parameters)
        for paged in (False, True) if family in _PAGED else (False,):
            for suffix, bits in (("", 32), ("8bit", 8), ("32bit", 32)):
                knobs = (*_BNB_KNOBS, ("is_paged", paged)) if family in _PAGED else _BNB_KNOBS
                name = f"{'Paged' if paged else ''}{family}{suffix}"
                table[name] = BnbOptimizer(native, (*parameters, *knobs), passed, bits, paged)
    return table


BNB_OPTIMIZERS = _bnb_optimizers()

# Imports with no stand-in: the module (or package) name -> what to do. A name here that is
# found installed is left alone; a submodule of a stand-in package that the stand-in lacks falls
# to its package's line.
NO_STAND_IN = {
    "flash_attn": "this part of flash-attn has no torchport stand-in: compute it in torch "
                  "(torch.nn.functional.scaled_dot_product_attention for attention)",
    "flash_attn_2_cuda": "flash-attn's compiled kernels: call flash_attn.flash_attn_func (torchport serves it) "
                         "or torch.nn.functional.scaled_dot_product_attention",
    "flash_attn_cuda": "flash-attn 1's compiled kernels: torch.nn.functional.scaled_dot_product_attention",
    "flash_attn_3_cuda": "flash-attn 3's Hopper kernels: torch.nn.functional.scaled_dot_product_attention",
    "fused_dense_lib": "flash-attn's fused dense kernel: torch.nn.Linear followed by its activation",
    "fused_softmax_lib": "a fused softmax kernel: torch.softmax on the masked scores",
    "selective_scan_cuda": "mamba's selective-scan kernel: use mamba's reference path "
                           "(mamba_ssm.ops.selective_scan_interface.selective_scan_ref) or a torch port of it",
    "causal_conv1d": "causal-conv1d's CUDA kernel: torch.nn.functional.conv1d with padding kernel_size - 1, "
                     "truncated to the input's length (mamba's causal_conv1d_ref)",
    "causal_conv1d_cuda": "causal-conv1d's CUDA kernel: torch.nn.functional.conv1d with left padding",
    "mamba_ssm": "mamba-ssm builds only against CUDA: port its reference path (selective_scan_ref, "
                 "causal_conv1d_ref) or use a torch implementation of Mamba",
    "triton": "Triton kernels need a GPU compiler (triton-ascend only on Atlas A2/A3): call the project's "
              "torch reference path of each kernel, or run without torch.compile",
    "xformers": "this part of xformers has no torchport stand-in: use torch (scaled_dot_product_attention "
                "for attention)",
    "bitsandbytes.nn": "bitsandbytes' 8-bit/4-bit layers (Linear8bitLt, Linear4bit, StableEmbedding) need its "
                       "CUDA kernels: keep the model in float32/bfloat16 (torch.nn.Linear, torch.nn.Embedding)",
    "bitsandbytes.functional": "bitsandbytes' quantisation kernels are CUDA's: no torch stand-in",
    "bitsandbytes.optim": "this bitsandbytes optimizer has no 32-bit twin in torch: choose a torch.optim optimizer",
    "bitsandbytes": "this part of bitsandbytes has no torchport stand-in: keep the model in float32/bfloat16 "
                    "and use a torch.optim optimizer",
    "liger_kernel": "Liger's Triton kernels: their torch modules (torch.nn.RMSNorm, CrossEntropyLoss, "
                    "the model's own SwiGLU and rotary code)",
    "transformer_engine": "Transformer Engine (FP8) is NVIDIA's: torch.nn layers in bfloat16",
    "apex_C": "apex's compiled helpers: import apex's Python API (torchport serves it) or torch",
    "amp_C": "apex's multi-tensor kernels: torch.optim's foreach/fused optimizers",
    "fused_layer_norm_cuda": "apex's fused LayerNorm kernel: torch.nn.LayerNorm / torch.nn.RMSNorm",
    "fused_adam_cuda": "apex's fused Adam kernel: torch.optim.AdamW(fused=...) or torchport.optim.FusedAdamW",
    "scaled_upper_triang_masked_softmax_cuda": "Megatron's fused causal softmax: torch.softmax on the masked "
                                               "scores (or scaled_dot_product_attention with is_causal=True)",
    "scaled_masked_softmax_cuda": "Megatron's fused masked softmax: torch.softmax on the masked scores",
    "flashinfer": "FlashInfer's kernels are CUDA's: torch.nn.functional.scaled_dot_product_attention",
    "cutlass": "CUTLASS's CuTe DSL compiles for NVIDIA GPUs only: the project's torch reference path of each "
               "kernel, or its computation in torch",
    "quack": "QuACK's kernels are CuTe DSL, for NVIDIA GPUs only: torch.nn.RMSNorm / LayerNorm, "
             "torch.nn.functional.cross_entropy, torch.softmax",
    "tilelang": "TileLang compiles for CUDA and ROCm: the project's torch reference path of each kernel, or its "
                "computation in torch",
    "tensorrt": "TensorRT is NVIDIA's inference runtime: export to ONNX (torch.onnx.export) and run it with the "
                "target's runtime (ONNX Runtime; on an NPU, Ascend's ATC offline models)",
    "torch_tensorrt": "Torch-TensorRT compiles for NVIDIA GPUs only: torch.compile, or an ONNX export run by the "
                      "target's runtime",
    "polygraphy": "Polygraphy drives TensorRT, NVIDIA's inference runtime: an ONNX export run by the target's "
                  "runtime (ONNX Runtime; on an NPU, Ascend's ATC offline models)",
}


def no_stand_in_advice(name: str) -> str | None:
    """What to do about an import of `name` that nothing serves, or None where the name is not
    one of the CUDA-only packages this module knows (its own missing-module error stands)."""
    parts = name.split(".")
    for length in range(len(parts), 0, -1):
        advice = NO_STAND_IN.get(".".join(parts[:length]))
        if advice is not None:
            return advice
    return None

# flash_attn_func on torch_npu's fused attention (migrate TP030, npu): q, k, v are (batch, seq, heads,
# head_dim), torch_npu's layout "BSND"; GQA/MQA as they are (key/value heads dividing the query's).
# flash-attn's causal mask is aligned bottom-right (>= 2.1): torch_npu's sparse_mode 3, which takes
# the compressed 2048 x 2048 mask (True above the diagonal: left out) whatever the lengths. flash-attn
# scales by 1/sqrt(head_dim) unless told; torch_npu by 1.0 unless told. keep_prob is 1 - dropout_p.
FLASH_ATTN_FUNC = ("flash_attn.flash_attn_func", "flash_attn.flash_attn_interface.flash_attn_func")
FLASH_ATTN_FUNC_PARAMETERS = ("q", "k", "v", "dropout_p", "softmax_scale", "causal")
NPU_FUSION_ATTENTION = "torch_npu.npu_fusion_attention"
NPU_LAYOUT = "BSND"
NPU_BOTTOM_RIGHT_CAUSAL = 3
NPU_COMPRESSED_MASK = 2048
