"""`import xformers` / `xformers.ops` where no xformers is installed (a CUDA build): the stand-in
torchport.compat.xformers is served (runtime/stand_in.py), as patch_flash_attn serves flash_attn."""

from __future__ import annotations

from torchport.apis.kernels_llm import SERVED_WHY, STAND_INS, XFORMERS
from torchport.runtime.stand_in import StandInFinder

ORDER = 72  # beside patch_apex (it replaces nothing of torch)


def install(session) -> None:
    StandInFinder(session, {XFORMERS: STAND_INS[XFORMERS]}, SERVED_WHY[XFORMERS], decline_honest=True).install()
