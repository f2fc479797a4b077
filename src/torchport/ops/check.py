"""A verdict for each op of an ops.json on a target: does the target have a kernel for it?

Verdicts, worst first:
  missing   no kernel on the target for any overload the call can be
  dtype     a kernel exists, but an input's element type cannot live on the target (float64 on MPS)
  partial   some of the overloads the call can be have no kernel (the source named only the op)
  unknown   the data cannot say (not an aten op; XPU kernels outside torch's own list; a target
            that names no kernel data, where only composite ops can be judged)
  internal  no kernel, but every recorded call was made inside an op the target runs with a kernel
            of its own (aten::cudnn_convolution inside aten::_convolution, recorded on CUDA, on
            the NPU, which has its own _convolution): the target never makes that call
  ok        a kernel of the target's, or a composite one that every backend shares

`accelerator` code must run wherever torch.accelerator lands, so an op there needs a kernel on
every backend torchport knows (CUDA, and each target's device): its verdict is the worst of them,
and "why" says which backends lack it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from torchport import targets
from torchport.ops.kernels import KernelData, Support
from torchport.ops.opset import OpRecord
from torchport.targets.kernels import CUDA


class Verdict(Enum):
    MISSING = "missing"
    DTYPE = "dtype"
    PARTIAL = "partial"
    UNKNOWN = "unknown"
    INTERNAL = "internal"
    OK = "ok"

    @property
    def severity(self) -> int:
        return list(Verdict).index(self)

    @property
    def is_problem(self) -> bool:
        return self in (Verdict.MISSING, Verdict.DTYPE, Verdict.PARTIAL)


@dataclass(frozen=True)
class Row:
    op: OpRecord
    verdict: Verdict
    why: str


@dataclass(frozen=True)
class Backend:
    """One backend code for a target needs kernels on: its dispatch key ('MPS', 'NPU', ...) and
    the element types its device cannot hold at all (the target's `advice.dtype_limits`)."""

    key: str
    dtype_limits: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, target) -> "Backend":
        """A target's kernels are listed under its `kernels.key`; a target that names no kernel
        data under its device type's (as torch's keys are: "MPS" for "mps")."""
        key = target.kernels.key if target.kernels is not None else target.device_type.upper()
        return cls(key, target.advice.dtype_limits)


def backends(target: str) -> list[Backend]:
    """The backends code for `target` needs kernels on: its device's, or for a target whose
    device is known only at run time (accelerator), CUDA and every other target's."""
    chosen = targets.get(target)
    if chosen.device_type:
        return [Backend.of(chosen)]
    others = [Backend.of(t) for t in targets.all_targets().values() if t.device_type]
    return [Backend(CUDA.key), *(b for b in others if b.key != CUDA.key)]  # (the cuda target's are CUDA's)


def check(ops, target: str, data: KernelData) -> list[Row]:
    """A row per op, worst verdict first, then the most called."""
    needed = backends(target)
    rows = [_row(record, needed, data) for record in ops]
    return sorted(rows, key=lambda row: (row.verdict.severity, -row.op.count, row.op.name))


def _row(record: OpRecord, needed: list[Backend], data: KernelData) -> Row:
    judged = [(backend.key, *judge(record, backend, data)) for backend in needed]
    if len(judged) == 1:
        _, verdict, why = judged[0]
        return Row(record, verdict, why)
    worst = min(verdict.severity for _, verdict, _ in judged)
    verdict = list(Verdict)[worst]
    lacking = [f"{key}: {why}" for key, v, why in judged if v is not Verdict.OK]
    return Row(record, verdict, "; ".join(lacking) or f"a kernel on each of {', '.join(b.key for b in needed)}")


def judge(record: OpRecord, target: Backend, data: KernelData) -> tuple[Verdict, str]:
    """The verdict and why for one op on one backend."""
    backend = target.key
    if record.namespace != "aten":
        support = data.custom_support(record.namespace, record.packet, backend)
        return _from_support(support, record, target)
    if not data.knows(record.packet):
        return Verdict.UNKNOWN, f"not an operator of torch {data.torch_version}"
    overloads = _overloads(record, data)
    answers = {name: data.support(name, backend) for name in overloads}
    verdict, why = _combine(answers, backend, data)
    if verdict is Verdict.MISSING or verdict is Verdict.PARTIAL:
        if _only_inside_own_kernels(record, backend, data):
            callers = ", ".join(sorted(record.callers))
            return Verdict.INTERNAL, f"called only inside {callers}, which {backend} runs with its own kernel; {why}"
        return verdict, why + _sole_backend_hint(overloads, data)
    return _dtype_verdict(record, target) or (verdict, why)


def _only_inside_own_kernels(record: OpRecord, backend: str, data: KernelData) -> bool:
    """Whether every call was made inside an op that `backend` runs with a kernel of its own."""
    if record.top_level != 0 or not record.callers:
        return False
    return all(data.own_kernel(caller, backend) for caller in record.callers)


def _sole_backend_hint(overloads: list[str], data: KernelData) -> str:
    """An op only one backend has (aten::cudnn_convolution) is mostly that backend's own path,
    chosen by an op above it (a kernel, or a composite op that looks at the device, as
    scaled_dot_product_attention does), which on the target may choose another path."""
    sole = {data.sole_backend(name) for name in overloads}
    if len(sole) != 1 or None in sole:
        return ""
    return f" (only {sole.pop()} has it: likely the path an op above it takes there, which may differ here)"


def _overloads(record: OpRecord, data: KernelData) -> list[str]:
    if record.overloads:
        return [data.overload_name(record.packet, o) for o in record.overloads]
    arities = {len(shapes) for shapes in record.shapes}
    return data.candidates(record.packet, arities)


def _combine(answers: dict[str, Support], backend: str, data: KernelData) -> tuple[Verdict, str]:
    lacking = [name for name, s in answers.items() if s.supported is False]
    unknown = [name for name, s in answers.items() if s.supported is None]
    having = [name for name, s in answers.items() if s.supported]
    if lacking and not having:
        why = answers[lacking[0]].how
        consequence = data.without_kernel(backend)
        return Verdict.MISSING, f"{why}: {consequence}" if consequence else why
    if lacking:
        return Verdict.PARTIAL, f"{', '.join(lacking)}: no {backend} kernel; {', '.join(having)}: {answers[having[0]].how}"
    if unknown:
        return Verdict.UNKNOWN, answers[unknown[0]].how
    return Verdict.OK, ", ".join(sorted({s.how for s in answers.values()}))


def _from_support(support: Support, record: OpRecord, target: Backend) -> tuple[Verdict, str]:
    if support.supported is None:
        return Verdict.UNKNOWN, support.how
    if not support.supported:
        return Verdict.MISSING, support.how
    return _dtype_verdict(record, target) or (Verdict.OK, support.how)


def _dtype_verdict(record: OpRecord, target: Backend) -> tuple[Verdict, str] | None:
    for dtype in record.dtypes or []:
        reason = target.dtype_limits.get(dtype)
        if reason:
            return Verdict.DTYPE, f"{dtype}: {reason}"
    return None
