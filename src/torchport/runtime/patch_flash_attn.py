"""`import flash_attn` where no flash-attn is installed (it builds only against CUDA): the stand-in
torchport.compat.flash_attn is served as `flash_attn` and its submodules, and
torchport.compat.rotary_emb, .xentropy_cuda_lib and .dropout_layer_norm as flash-attn's compiled `rotary_emb`,
`xentropy_cuda_lib` and `dropout_layer_norm` extensions (runtime/stand_in.py).
A real package (any the other finders find) is left alone; libraries that probe the hardware
(`session.honest`: transformers, diffusers, ...) find it missing, as it is. Each served import
is logged at the script's line, and each call of a served function or class at its own."""

from __future__ import annotations

from torchport.apis.kernels_llm import FLASH_ATTN, ROTARY_EMB, SERVED_WHY, STAND_INS, XENTROPY, DROPOUT_LAYER_NORM
from torchport.runtime.stand_in import StandInFinder

ORDER = 71  # beside patch_apex (it replaces nothing of torch)


def install(session) -> None:
    for package in (FLASH_ATTN, ROTARY_EMB, XENTROPY, DROPOUT_LAYER_NORM):
        StandInFinder(session, {package: STAND_INS[package]}, SERVED_WHY[package], decline_honest=True).install()
