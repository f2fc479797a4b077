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
