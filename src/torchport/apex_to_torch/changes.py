"""The conversion's report codes, with the few words the terminal summary prints for each."""

from __future__ import annotations

CODES = {
    "TP301": "apex: amp.initialize -> autocast and a GradScaler",
    "TP302": "apex: scale_loss and the optimizer step -> the GradScaler's",
    "TP303": "apex: master_params and amp state in checkpoints -> the optimizer's and the scaler's",
    "TP304": "apex: fused optimizers -> torchport.optim",
    "TP305": "apex: parallel (DistributedDataParallel, SyncBatchNorm) -> torch's",
    "TP306": "apex: fused normalization -> torch.nn",
    "TP307": "apex: the stand-in package, where a form has no confident rewrite",
    "TP300": "apex: uses left as they were",
}


class Unconvertible(Exception):
    """A form the conversion cannot rewrite with confidence: the file falls back to the stand-in
    package as a whole. `notes`: rows the file keeps even so (apex.fp16_utils' recipe)."""

    def __init__(self, line: int, why: str, notes: tuple = ()):
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why
        self.notes = notes
