"""Kernel paths of CUDA-era code that some targets cannot take (TP037): Triton kernels, FP8 matmuls
and dtypes, FlexAttention, torch.compile (and its modes that capture CUDA graphs), and the choice
of scaled_dot_product_attention's kernel. What each is, by the APIs that take it; what a target
lacks of them is the target's (`Target.kernel_paths`), and which SDPA kernels it has is its
kernel data's.

Sources (facts only): ../shared/reference/modern.md (triton-ascend only on Atlas A2/A3, kernels
retuned; inductor serves NPU training only through triton-ascend, torchair's backend otherwise;
`mode="reduce-overhead"` relies on CUDA graphs; no FP8 training on Atlas A2, DeepSeek-V3 PR #903;
FlexAttention unsupported on the NPU, Ascend/pytorch#147); Hugging Face's kernels docs (get_kernel loads
the build for the device it runs on; each kernel repo lists its backends; has_kernel checks); CUTLASS's
CuTe DSL (NVIDIA GPUs only); TileLang (CUDA and ROCm backends); torch 2.13's `torch.compile` docstring
(reduce-overhead and max-autotune use CUDA graphs) and `torch/nn/attention/__init__.py` (SDPBackend);
torch's kernel data (which devices have each SDPA kernel).
No torch at import.
"""

from __future__ import annotations

from typing import NamedTuple

TRITON = "Triton kernels"
FP8 = "FP8"
FLEX_ATTENTION = "FlexAttention"
COMPILE = "torch.compile"
CUDA_GRAPHS = "CUDA graphs"
CUTE_DSL = "CuTe DSL kernels"
TILELANG = "TileLang kernels"
HUB_KERNELS = "Hub kernels"


class KernelPath(NamedTuple):
    """What a target says of one kernel path: whether it lacks it (an UNSUPPORTED row) or runs it
    with a caveat (a NOTE), and why, with the way out."""
    lacks: bool
    why: str


def lacks(why: str) -> KernelPath:
    return KernelPath(True, why)


def caveat(why: str) -> KernelPath:
    return KernelPath(False, why)


# A function decorated with one of these is a kernel written in a GPU kernel language (or its
# launcher's tuning), by the path it takes.
KERNEL_DECORATORS = {"triton.jit": TRITON, "triton.autotune": TRITON, "triton.heuristics": TRITON,
                     "cutlass.cute.jit": CUTE_DSL, "cutlass.cute.kernel": CUTE_DSL, "tilelang.jit": TILELANG}
HUB_KERNEL_APIS = ("kernels.get_kernel", "kernels.get_local_kernel")  # Hugging Face's kernel hub
FP8_DTYPES = ("torch.float8_e4m3fn", "torch.float8_e5m2", "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz",
              "torch.float8_e8m0fnu")
FP8_APIS = ("torch._scaled_mm", "torch._scaled_grouped_mm", "torchao.float8.convert_to_float8_training")
FLEX_ATTENTION_APIS = ("torch.nn.attention.flex_attention.flex_attention",
                       "torch.nn.attention.flex_attention.create_block_mask")
COMPILE_API = "torch.compile"
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")  # torch.compile's modes that capture CUDA graphs

# scaled_dot_product_attention's kernels (torch.nn.attention.SDPBackend's names), each with the aten
# operators that are it on some device; MATH is composite: every device has it.
SDPA_BACKEND_OPERATORS = {
    "MATH": (),
    "FLASH_ATTENTION": ("_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu"),
    "EFFICIENT_ATTENTION": ("_scaled_dot_product_efficient_attention",),
    "CUDNN_ATTENTION": ("_scaled_dot_product_cudnn_attention",),
}
SDPA_CHOICE_OPERATOR = "_fused_sdp_choice"  # where a device's SDPA picks among its kernels (by the flags)
SDPA_KERNEL = "torch.nn.attention.sdpa_kernel"  # sdpa_kernel(backends): only those, inside the block
SDP_KERNEL = "torch.backends.cuda.sdp_kernel"  # sdp_kernel(enable_flash=True, ...): deprecated, same
SDP_KERNEL_KEYWORDS = {"enable_flash": "FLASH_ATTENTION", "enable_math": "MATH",
                       "enable_mem_efficient": "EFFICIENT_ATTENTION", "enable_cudnn": "CUDNN_ATTENTION"}
# The global switches (each backend on or off for every later call)
SDP_SWITCHES = {"torch.backends.cuda.enable_flash_sdp": "FLASH_ATTENTION",
                "torch.backends.cuda.enable_math_sdp": "MATH",
                "torch.backends.cuda.enable_mem_efficient_sdp": "EFFICIENT_ATTENTION",
                "torch.backends.cuda.enable_cudnn_sdp": "CUDNN_ATTENTION"}

# What each target says, by path; a path a target does not name runs there as on CUDA.
TRITON_REFERENCE = "call the project's torch reference path of the kernel (where it ships one), or write the kernel's " \
                   "computation in torch"
CUTE_REFERENCE = "CuTe DSL compiles for NVIDIA GPUs only: " + TRITON_REFERENCE
TILELANG_REFERENCE = "TileLang compiles for CUDA and ROCm: " + TRITON_REFERENCE
HUB_BUILDS = ("get_kernel loads the build for the device it runs on, and a kernel repo has builds for the backends "
              "it lists (most: cuda, rocm, xpu): where {device} is not among them the call raises; check with "
              "kernels.has_kernel and keep the model's torch path for the rest")


def _other_kernel_languages(said, device: str) -> dict[str, KernelPath]:
    """CuTe DSL and TileLang kernels (`said`: lacks or caveat) and Hub kernels, on `device`."""
    return {CUTE_DSL: said(CUTE_REFERENCE), TILELANG: said(TILELANG_REFERENCE),
            HUB_KERNELS: caveat(HUB_BUILDS.format(device=device))}


NPU = {
    **_other_kernel_languages(lacks, "the NPU"),
    TRITON: lacks("Triton compiles for the NPU only through triton-ascend (Atlas A2/A3), with kernels retuned "
                  f"(num_warps and num_stages dropped, block sizes fitted to the unified buffer): {TRITON_REFERENCE}"),
    FP8: lacks("Atlas A2 trains in no FP8 (DeepSeek-V3 PR #903): train in bfloat16"),
    FLEX_ATTENTION: lacks("FlexAttention has no NPU kernel (Ascend/pytorch#147): scaled_dot_product_attention with "
                          "the mask materialised (torch.nn.attention.flex_attention.create_mask)"),
    COMPILE: caveat("inductor compiles for the NPU only through triton-ascend: without it, compile with torchair's "
                    "backend (torchair.get_npu_backend()) or run the model eagerly"),
    CUDA_GRAPHS: lacks("this mode captures CUDA graphs: on the NPU compile with torchair's backend "
                       "(torchair.get_npu_backend()), or use mode=\"default\""),
}
CPU = {
    **_other_kernel_languages(lacks, "the CPU"),
    TRITON: lacks(f"Triton's releases have no CPU backend: {TRITON_REFERENCE}"),
    FP8: caveat("the CPU computes FP8 by emulation, far slower than bfloat16: train in bfloat16 there"),
    CUDA_GRAPHS: caveat("there are no CUDA graphs on the CPU: inductor compiles the model as in mode=\"default\""),
}
MPS = {
    **_other_kernel_languages(lacks, "Metal"),
    TRITON: lacks(f"Triton has no MPS backend: {TRITON_REFERENCE}"),
    FP8: lacks("MPS has no float8 dtypes: train in bfloat16 or float16"),
    CUDA_GRAPHS: caveat("there are no CUDA graphs on MPS: the mode compiles as mode=\"default\""),
}
ACCELERATOR = {
    **_other_kernel_languages(caveat, "the device"),
    TRITON: caveat("Triton runs where it has a backend (CUDA, ROCm, XPU), not on the CPU, MPS or an NPU without "
                   f"triton-ascend: where the device may be one of those, {TRITON_REFERENCE}"),
    FP8: caveat("FP8 is computed natively on recent GPUs only (emulated on the CPU, absent on MPS and Atlas A2): "
                "keep a bfloat16 path for the other devices"),
    FLEX_ATTENTION: caveat("FlexAttention has no NPU kernel (Ascend/pytorch#147): where the device may be an NPU, "
                           "scaled_dot_product_attention with the mask materialised"),
}
