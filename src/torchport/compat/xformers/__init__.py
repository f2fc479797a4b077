"""xformers' public attention API on torch, for `torchport run` where xformers is not installed (a
CUDA build): xformers.ops.memory_efficient_attention on F.scaled_dot_product_attention with its
bias classes (xformers.ops.fmha.attn_bias), SwiGLU on torch. What each name means is
apis/kernels_llm.py's; a name the stand-in lacks is an AttributeError that says what to do."""

from torchport.apis.kernels_llm import XFORMERS
from torchport.compat._kernels_log import module_getattr
from torchport.compat.xformers import ops  # noqa: F401  (its submodule)

__getattr__ = module_getattr(XFORMERS, __name__)
