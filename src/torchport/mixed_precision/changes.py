"""`--amp`'s modes, its default per target, and its report codes."""

from __future__ import annotations

from torchport.apis.amp import AUTOCAST, GRAD_SCALER
from torchport.findings import Code, subjects, titles

TORCH, APEX, OFF = "torch", "apex", "off"
MODES = (TORCH, APEX, OFF)

STEP = Code("TP501", "amp: a training step's backward and step under loss scaling (its forward under autocast, or apex's "
                     "O2 model)", AUTOCAST)
MADE = Code("TP502", "amp: the loss scaler (or amp.initialize) where the optimizer is made", GRAD_SCALER)
SAVED = Code("TP503", "amp: the scaler's state saved beside the optimizer's", "checkpoint")
NOTE = Code("TP500", "amp: training steps left in float32, and why", "--amp")

CODES = titles((STEP, MADE, SAVED, NOTE))
SUBJECTS = subjects((NOTE, STEP, MADE, SAVED))


def default_mode(target) -> str:
    """torch on a target whose matrix units compute in half precision (the NPU: float32 matrix work
    falls back to its slow vector unit), off elsewhere (AMP changes the numbers: the user's choice).
    torch rather than apex: torch.amp ships with torch_npu, Ascend's apex is a build of its own."""
    return TORCH if target.advice.needs_amp else OFF


def refusal(mode: str | None, apex_mode: str | None, target) -> str | None:
    """Why `--amp mode` cannot go with `--apex apex_mode` on `target` (None where it can)."""
    if mode == APEX and not target.keeps_apex:
        return (f"--amp apex writes Ascend's apex form (amp.initialize with combine_grad=True), which only a target "
                f"with Ascend's apex has (npu): use --amp torch on {target.name}")
    if mode == APEX and apex_mode == "native":
        return "--amp apex adds apex's amp, which --apex native would rewrite to torch.amp: use --amp torch instead"
    return None
