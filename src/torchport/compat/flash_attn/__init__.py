"""flash-attn's public API on torch, for `torchport run` where flash-attn is not installed (it builds
only against CUDA): the attention functions on F.scaled_dot_product_attention with flash-attn's
semantics (causal mask aligned bottom-right, sliding windows, GQA/MQA, varlen packing), and the
modules, norms, rotary embedding and cross-entropy on torch. What each name means is
apis/kernels_llm.py's; a name the stand-in lacks is an AttributeError that says what to do."""

from torchport.apis.kernels_llm import FLASH_ATTN
from torchport.compat._kernels_log import module_getattr
from torchport.compat.flash_attn.flash_attn_interface import (
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    flash_attn_varlen_kvpacked_func,
    flash_attn_varlen_qkvpacked_func,
)

# The release whose semantics the stand-in follows (code that tests the version for the causal
# alignment, which changed in 2.1, takes the newer branch).
__version__ = "2.6.3"

__all__ = ["flash_attn_func", "flash_attn_kvpacked_func", "flash_attn_qkvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_kvpacked_func", "flash_attn_varlen_qkvpacked_func"]

__getattr__ = module_getattr(FLASH_ATTN, __name__)
