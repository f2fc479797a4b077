"""TP101: a float32 training step where the target's matrix units compute in half precision.
Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import re

import libcst as cst

from torchport.apis.amp import AUTOCAST
from torchport.findings import Operation
from torchport.migrate.rules.base.training_step import TRAINING_STEP, TrainingStepRule

MIXED_PRECISION = re.compile(rb"autocast|GradScaler|\.half\(|bfloat16|float16|amp\.initialize")


class MixedPrecisionAdvice(TrainingStepRule):
    """Where the target's matrix units compute in float16/bfloat16 (the NPU), a float32 training
    step leaves most of the chip idle: a file that trains (`.backward()`) with no autocast,
    GradScaler or half precision anywhere gets one row, at its first backward."""

    code = "TP101"
    order = 1010
    reads = ()
    mentions = TRAINING_STEP
    title = "advice: mixed precision"
    readme = """advice (npu): a training step with no autocast, GradScaler or half precision anywhere in the file: the
    NPU's matrix units run float16/bfloat16"""

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.needs_amp

    def leave_Module(self, original_node: cst.Module) -> None:  # noqa: N802
        trains_in_float32 = self.first_backward is not None and not MIXED_PRECISION.search(self.context.whole_source)
        if trains_in_float32 and self.context.first_time(self.code):  # (the file's first backward, in any piece)
            self.report(self.first_backward, Operation.PERFORMANCE,
                        f"this step trains in float32: on {self.target.name} the matrix units run float16/bfloat16; "
                        f"wrap the forward in torch.autocast(\"{self.target.device_type}\") with a GradScaler",
                        api=AUTOCAST)
