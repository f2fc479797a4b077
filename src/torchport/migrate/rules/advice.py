"""TP101-TP107: advice about speed and precision on the target. These rules change nothing:
each row names the line it is about (never a row per file "just in case")."""

from __future__ import annotations

import re

import libcst as cst

from torchport.apis.amp import AUTOCAST
from torchport.findings import Operation
from torchport.migrate.rules.base import Rule, call_argument, source_of

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel",
                 "torch.nn.parallel.data_parallel.DataParallel"}
SPAWNS = {"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes",
          "torch.multiprocessing.spawn.spawn", "torch.multiprocessing.spawn.start_processes"}
DDP = {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
FLOAT64 = {"torch.float64", "torch.double"}
MIXED_PRECISION = re.compile(rb"autocast|GradScaler|\.half\(|bfloat16|float16|amp\.initialize")


def _is_backward(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"


# A training step: a backward pass and an optimizer step in one file (a test that only
# differentiates is not one).
TRAINING_STEP = rb"(?s:\.backward\((?=.*\.step\()|\.step\((?=.*\.backward\())"


class _TrainingStepRule(Rule):
    """A rule whose advice is about the training step: anchored at the file's first
    `.backward()` call, reported once the whole file has been seen."""

    def __init__(self, context) -> None:
        super().__init__(context)
        self.first_backward: cst.Call | None = None

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.first_backward is None and _is_backward(node):
            self.first_backward = node


class MixedPrecisionAdvice(_TrainingStepRule):
    """Where the target's matrix units compute in float16/bfloat16 (the NPU), a float32 training
    step leaves most of the chip idle: a file that trains (`.backward()`) with no autocast,
    GradScaler or half precision anywhere gets one row, at its first backward."""

    code = "TP101"
    reads = ()
    mentions = TRAINING_STEP
    title = "advice: mixed precision"

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


class Float64Advice(Rule):
    """A device without float64 (MPS) raises on any float64 tensor: `torch.float64`,
    `torch.double` and `.double()` each get a row."""

    code = "TP102"
    reads = tuple(FLOAT64)
    mentions = rb"float64|\bdouble\b"
    title = "advice: float64"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.no_float64

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if self.target.advice.no_float64 and self.qualified_name(node) in FLOAT64:
            self._advise(node, source_of(node))

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if self.target.advice.no_float64 and isinstance(func, cst.Attribute) and func.attr.value == "double" and not node.args:
            self._advise(node, ".double()")

    def _advise(self, node: cst.CSTNode, api: str) -> None:
        self.report(node, Operation.PRECISION,
                    f"{self.target.name} has no float64: this raises there; use float32 (or keep this part on the CPU)", api=api)


class DataParallelAdvice(Rule):
    """`nn.DataParallel` is a single-process, CUDA-era wrapper: other backends do not split the
    batch with it (and on the CPU it only prefixes checkpoint keys with `module.`)."""

    code = "TP103"
    reads = tuple(DATA_PARALLEL)
    mentions = rb"DataParallel\(|data_parallel\("
    title = "advice: DataParallel"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api not in DATA_PARALLEL:
            return
        if self.target.advice.has_device:
            message = (f"DataParallel does not split work across {self.target.name} devices: use "
                       "DistributedDataParallel with one process per device (torchrun)")
        else:
            message = "on the CPU DataParallel splits nothing and prefixes checkpoint keys with 'module.': drop it"
        self.report(node, Operation.PERFORMANCE, message, api=api)


class SpawnAdvice(Rule):
    """`mp.spawn` starts the processes from inside the script; device backends expect one
    process per device started by a launcher, each reading its LOCAL_RANK (Ascend's ports all
    made this change)."""

    code = "TP104"
    reads = tuple(SPAWNS)
    mentions = rb"spawn\(|start_processes\("
    title = "advice: process launch"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.has_device

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api in SPAWNS and self.target.advice.has_device:
            self.report(node, Operation.PERFORMANCE,
                        f"start one process per {self.target.name} device with a launcher instead "
                        "(torchrun --nproc_per_node N train.py, each process reading LOCAL_RANK)", api=api)


class BroadcastBuffersAdvice(Rule):
    """DDP broadcasts every buffer from rank 0 before each forward unless told not to: a copy per
    step that a model without BatchNorm statistics to share does not need."""

    code = "TP105"
    reads = tuple(DDP)
    mentions = rb"DistributedDataParallel\(|DDP\("
    title = "advice: DDP buffers"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func)
        if api in DDP and call_argument(node, "broadcast_buffers") is None:
            self.report(node, Operation.PERFORMANCE,
                        "DDP broadcasts all buffers before every forward: pass broadcast_buffers=False "
                        "unless buffers must stay in sync (BatchNorm running stats without SyncBatchNorm)", api=api)


class NonBlockingAdvice(Rule):
    """A host-to-device copy inside a loop (`x.to(device)`, `x.cuda()`) without
    `non_blocking=True` makes the host wait for every batch. Looked for where a file trains
    (a backward and an optimizer step): copies in the training loop are the ones that count."""

    code = "TP106"
    reads = ()
    mentions = TRAINING_STEP  # (the copies that matter are those of a training loop)
    title = "advice: copies in loops"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.advice.has_device

    def __init__(self, context) -> None:
        super().__init__(context)
        self.loops = 0  # loops around the current node, in the current function
        self.outer: list[int] = []  # the same count for each function the current one is in

    def visit_For(self, node: cst.For) -> None:  # noqa: N802
        self.loops += 1

    def leave_For(self, original_node: cst.For) -> None:  # noqa: N802
        self.loops -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        self.outer.append(self.loops)
        self.loops = 0

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:  # noqa: N802
        self.loops = self.outer.pop()

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if not self.loops or not self.target.advice.has_device or not _is_device_copy(node):
            return
        if call_argument(node, "non_blocking") is None:
            self.report(node, Operation.PERFORMANCE,
                        "a copy to the device in a loop: pass non_blocking=True (and pin_memory=True to the "
                        "DataLoader) so that it overlaps the compute", api=f".{node.func.attr.value}()")


def _is_device_copy(node: cst.Call) -> bool:
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
        return False
    if func.attr.value == "cuda":
        return True
    if call_argument(node, "device") is not None:
        return True
    first = node.args[0].value if node.args and node.args[0].keyword is None else None
    text = source_of(first).lower() if first is not None else ""
    return any(word in text for word in ("device", "cuda", "gpu", "rank"))


class LaunchEnvironmentAdvice(_TrainingStepRule):
    """The switches a target's guide recommends for every training run (the NPU's task queue),
    and its remedy for input shapes that vary between steps: at the first backward of a file
    that sets neither."""

    code = "TP107"
    reads = ()
    mentions = TRAINING_STEP
    title = "advice: launch environment"

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
