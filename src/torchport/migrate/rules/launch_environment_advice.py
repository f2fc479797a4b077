"""TP107: the launch settings a target's guide recommends for every training run. Advice changes nothing: each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.training_step import TRAINING_STEP, TrainingStepRule


class LaunchEnvironmentAdvice(TrainingStepRule):
    """The switches a target's guide recommends for every training run (the NPU's task queue),
    and its remedy for input shapes that vary between steps: at the first backward of a file
    that sets neither."""

    code = "TP107"
    order = 1070
    reads = ()
    mentions = TRAINING_STEP
    title = "advice: launch environment"
    readme = """advice (npu): `TASK_QUEUE_ENABLE=1`, and `set_compile_mode(jit_compile=False)` when shapes vary, at the
    first training step of a file that sets neither"""

    @classmethod
    def applies_to(cls, target) -> bool:
        return bool(target.advice.launch_env or target.advice.varying_shapes)

    def leave_Module(self, original_node: cst.Module) -> None:  # noqa: N802
        advice = self.target.advice
        if self.first_backward is None or not self.context.first_time(self.code):
            return
        said = self.context.whole_source
        for setting in advice.launch_env:
            if setting.split("=")[0].encode() not in said:
                self.report(self.first_backward, Operation.PERFORMANCE,
                            f"set {setting} in the launch environment, as {self.target.name}'s guide recommends",
                            api=setting.split("=")[0])
        if advice.varying_shapes and advice.varying_shapes_api.encode() not in said:
            self.report(self.first_backward, Operation.PERFORMANCE,
                        f"if input shapes vary between steps (torchport shapes finds out), call {advice.varying_shapes}",
                        api=advice.varying_shapes_api)
