"""bitsandbytes' optimizers on torch, for `torchport run` where bitsandbytes is not installed (its
8-bit kernels are CUDA's): each `bitsandbytes.optim` optimizer is torch.optim's 32-bit one with the
same hyper-parameters (the same update; the state takes 4x the memory of 8-bit state, which the log
says). bitsandbytes' quantised layers (`bitsandbytes.nn`) and kernels (`functional`) have no stand-in:
an AttributeError (or ImportError) says what to do."""

from torchport.apis.kernels_llm import BITSANDBYTES
from torchport.compat._kernels_log import module_getattr
from torchport.compat.bitsandbytes import optim  # noqa: F401  (its submodule)

__getattr__ = module_getattr(BITSANDBYTES, __name__)
