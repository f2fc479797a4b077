"""TP101: a float32 training step where the target's matrix units compute in half precision.
Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.apis.amp import (AMP_PREFIX, AUTOCAST, DEVICE_FIRST, FSDP_PRECISION, FSDP_SHARDS, GRAD_SCALER,
                                OWN_MIXED_PRECISION, TORCH_AMP)
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import device_expression
from torchport.migrate.rules.base.training_step import TRAINING_STEP, TrainingStepRule


class MixedPrecisionAdvice(TrainingStepRule):
    """Where the target's matrix units compute in float16/bfloat16 (the NPU), a float32 training
    step leaves most of the chip idle: a file that trains (`.backward()`) with no mixed precision of
    its own anywhere (autocast, a scaler, half precision, apex, nor a framework that sets the precision:
    accelerate, DeepSpeed, Lightning, transformers' Trainer; the one list `--amp` reads) gets one
    row, at its first backward."""

    code = "TP101"
    order = 1010
    reads = ()
    mentions = TRAINING_STEP
    title = "advice: mixed precision"
    readme = """advice (npu): a training step with no mixed precision anywhere in the file (autocast, GradScaler, half
    precision, apex, or a framework that sets it: accelerate, DeepSpeed, Lightning): the NPU's matrix units run
    float16/bfloat16"""

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.needs_amp

    def leave_Module(self, original_node: cst.Module) -> None:  # noqa: N802
        trains_in_float32 = self.first_backward is not None and not OWN_MIXED_PRECISION.search(self.context.whole_source)
        if not (trains_in_float32 and self.context.first_time(self.code)):  # (the file's first backward, in any piece)
            return
        if FSDP_SHARDS.search(self.context.whole_source.decode("utf-8", "replace")):
            how = f"give FSDP a mixed precision policy: {FSDP_PRECISION}"
        else:
            how = (f"wrap the forward in {amp_call(self.target, AUTOCAST)} with a {amp_call(self.target, GRAD_SCALER)} "
                   "(migrate --amp torch writes it)")
        self.report(self.first_backward, Operation.PERFORMANCE,
                    f"this step trains in float32: on {self.target.name} the matrix units run float16/bfloat16; {how}",
                    api=AUTOCAST)


def amp_call(target, name: str) -> str:
    """`torch.cuda.amp.<name>()` as migrate writes it on `target` (TP005, from the target's verdict):
    the target's own AMP (`torch.npu.amp.autocast()`), else torch.amp's with the device type first."""
    replacement = target.verdict(AMP_PREFIX + name).replacement or f"{TORCH_AMP}.{name}"
    device = device_expression(target, None) if name in DEVICE_FIRST and replacement.startswith(f"{TORCH_AMP}.") else ""
    return f"{replacement}({device})"
