"""`import apex` where no apex is installed: torchport's stand-in (torchport.compat.apex) is served
as `apex`, `apex.amp`, `apex.optimizers`, ... (runtime/stand_in.py), and its kernels
(torchport.compat.amp_C) as apex's CUDA extension `amp_C`; a real apex (any the other
finders find) is left alone. Each served module is logged at the script's import line; the
stand-in logs each apex call it answers (see torchport.compat.apex._log).
"""

from __future__ import annotations

from torchport.apis.apex import AMP_C, APEX, COMPAT, COMPAT_AMP_C
from torchport.runtime.stand_in import StandInFinder

ORDER = 70  # after patch_streams, before patch_compilers (it replaces nothing of torch)
WHY = "apex is not installed: its API on torch.amp, torchport.optim, torch DDP and foreach ops"


def install(session) -> None:
    StandInFinder(session, {APEX: COMPAT, AMP_C: COMPAT_AMP_C}, WHY).install()
