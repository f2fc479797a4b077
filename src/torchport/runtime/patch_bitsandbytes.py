"""`import bitsandbytes` where none is installed (its 8-bit kernels are CUDA's): the stand-in
torchport.compat.bitsandbytes is served (runtime/stand_in.py): its optimizers are torch.optim's
32-bit ones, and the log says that optimizer state memory grows."""

from __future__ import annotations

from torchport.apis.kernels_llm import BITSANDBYTES, SERVED_WHY, STAND_INS
from torchport.runtime.stand_in import StandInFinder

ORDER = 73  # beside patch_apex (it replaces nothing of torch)


def install(session) -> None:
    StandInFinder(session, {BITSANDBYTES: STAND_INS[BITSANDBYTES]}, SERVED_WHY[BITSANDBYTES],
                  decline_honest=True).install()
