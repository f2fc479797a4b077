"""The conversion's report codes, with the few words the terminal summary prints for each."""

from __future__ import annotations

from torchport.findings import Code, titles

AMP_INITIALIZE = Code("TP301", "apex: amp.initialize -> autocast and a GradScaler")
LOSS_SCALING = Code("TP302", "apex: scale_loss and the optimizer step -> the GradScaler's")
CHECKPOINT_STATE = Code("TP303", "apex: master_params and amp state in checkpoints -> the optimizer's and the scaler's")
FUSED_OPTIMIZERS = Code("TP304", "apex: fused optimizers -> torchport.optim")
PARALLEL_MODULES = Code("TP305", "apex: parallel (DistributedDataParallel, SyncBatchNorm) -> torch's")
FUSED_NORMALIZATION = Code("TP306", "apex: fused normalization -> torch.nn")
FALLBACK = Code("TP307", "apex: the stand-in package, where a form has no confident rewrite")
NOTE = Code("TP300", "apex: uses left as they were")

CODES = titles((AMP_INITIALIZE, LOSS_SCALING, CHECKPOINT_STATE, FUSED_OPTIMIZERS, PARALLEL_MODULES, FUSED_NORMALIZATION,
                FALLBACK, NOTE))


class Unconvertible(Exception):
    """A form the conversion cannot rewrite with confidence: the file falls back to the stand-in
    package as a whole. `notes`: rows the file keeps even so (apex.fp16_utils' recipe)."""

    def __init__(self, line: int, why: str, notes: tuple = ()):
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why
        self.notes = notes
