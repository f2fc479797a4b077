"""flash_attn.losses, as far as torchport stands in for it (a name it lacks says what to do)."""

from torchport.compat._kernels_log import module_getattr

__getattr__ = module_getattr("flash_attn.losses", __name__)
