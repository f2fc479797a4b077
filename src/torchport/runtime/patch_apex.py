"""`import apex` where no apex is installed: torchport's stand-in (torchport.compat.apex) is served
as `apex`, `apex.amp`, `apex.optimizers`, ... (runtime/stand_in.py); a real apex (any the other
finders find) is left alone. Each served module is logged at the script's import line; the
stand-in logs each apex call it answers (see torchport.compat.apex._log).
"""

from __future__ import annotations

from torchport.apis.apex import APEX, COMPAT
from torchport.runtime.stand_in import StandInFinder

ORDER = 70  # after patch_streams, before patch_compilers (it replaces nothing of torch)
WHY = "apex is not installed: its API on torch.amp, torchport.optim and torch DDP"


def install(session) -> None:
    StandInFinder(session, {APEX: COMPAT}, WHY).install()
