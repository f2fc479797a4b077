"""A verdict for each op of an ops.json on a target: does the target have a kernel for it?

Verdicts, worst first:
  missing   no kernel on the target for any overload the call can be
  dtype     a kernel exists, but an input's element type cannot live on the target (float64 on MPS)
  partial   some of the overloads the call can be have no kernel (the source named only the op)
  unknown   the data cannot say (not an aten op; XPU kernels outside torch's own list)
  internal  no kernel, but every recorded call was made inside an op the target runs with a kernel
            of its own (aten::cudnn_convolution inside aten::_convolution, recorded on CUDA, on
            the NPU, which has its own _convolution): the target never makes that call
  ok        a kernel of the target's, or a composite one that every backend shares

`accelerator` code must run wherever torch.accelerator lands, so an op there needs a kernel on
every backend torchport knows (CUDA, and each target's device): its verdict is the worst of them,
and "why" says which backends lack it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from torchport import targets
from torchport.ops import dtypes
from torchport.ops.kernels import NPU, KernelData, Support
from torchport.ops.opset import OpRecord


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


# What happens to an op that has no kernel, per backend.
CONSEQUENCE = {
    NPU: "torch_npu runs it on the CPU, with a warning (slow)",
    "MPS": "it fails, or runs on the CPU with PYTORCH_ENABLE_MPS_FALLBACK=1 (slow)",
}


@dataclass(frozen=True)
class Row:
    op: OpRecord
    verdict: Verdict
    why: str


def backends(target: str) -> list[str]:
    """The dispatch keys code for `target` needs kernels on: its device's, or for a target whose
    device is known only at run time (accelerator), CUDA and every other target's."""
    device = targets.get(target).device_type
    if device:
        return [device.upper()]
    others = [t.device_type.upper() for t in targets.all_targets().values() if t.device_type]
    return ["CUDA", *others]


def check(ops, target: str, data: KernelData) -> list[Row]:
    """A row per op, worst verdict first, then the most called."""
    keys = backends(target)
    rows = [_row(record, keys, data) for record in ops]
    return sorted(rows, key=lambda row: (row.verdict.severity, -row.op.count, row.op.name))


def _row(record: OpRecord, keys: list[str], data: KernelData) -> Row:
    judged = [(key, *judge(record, key, data)) for key in keys]
    if len(judged) == 1:
        _, verdict, why = judged[0]
        return Row(record, verdict, why)
    worst = min(verdict.severity for _, verdict, _ in judged)
    verdict = list(Verdict)[worst]
    lacking = [f"{key}: {why}" for key, v, why in judged if v is not Verdict.OK]
    return Row(record, verdict, "; ".join(lacking) or f"a kernel on each of {', '.join(keys)}")


def judge(record: OpRecord, backend: str, data: KernelData) -> tuple[Verdict, str]:
    """The verdict and why for one op on one backend (a dispatch key: 'MPS', 'NPU', ...)."""
    if record.namespace != "aten":
        support = data.custom_support(record.namespace, record.packet, backend)
        return _from_support(support, record, backend)
    if not data.knows(record.packet):
        return Verdict.UNKNOWN, f"not an operator of torch {data.torch_version}"
    overloads = _overloads(record, data)
    answers = {name: data.support(name, backend) for name in overloads}
    verdict, why = _combine(answers, backend)
    if verdict is Verdict.MISSING or verdict is Verdict.PARTIAL:
        if _only_inside_own_kernels(record, backend, data):
            callers = ", ".join(sorted(record.callers))
            return Verdict.INTERNAL, f"called only inside {callers}, which {backend} runs with its own kernel; {why}"
        return verdict, why + _sole_backend_hint(overloads, data)
    return _dtype_verdict(record, backend) or (verdict, why)


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


def _combine(answers: dict[str, Support], backend: str) -> tuple[Verdict, str]:
    lacking = [name for name, s in answers.items() if s.supported is False]
    unknown = [name for name, s in answers.items() if s.supported is None]
    having = [name for name, s in answers.items() if s.supported]
    if lacking and not having:
        why = answers[lacking[0]].how
        consequence = CONSEQUENCE.get(backend)
        return Verdict.MISSING, f"{why}: {consequence}" if consequence else why
    if lacking:
        return Verdict.PARTIAL, f"{', '.join(lacking)}: no {backend} kernel; {', '.join(having)}: {answers[having[0]].how}"
    if unknown:
        return Verdict.UNKNOWN, answers[unknown[0]].how
    return Verdict.OK, ", ".join(sorted({s.how for s in answers.values()}))


def _from_support(support: Support, record: OpRecord, backend: str) -> tuple[Verdict, str]:
    if support.supported is None:
        return Verdict.UNKNOWN, support.how
    if not support.supported:
        return Verdict.MISSING, support.how
    return _dtype_verdict(record, backend) or (Verdict.OK, support.how)


def _dtype_verdict(record: OpRecord, backend: str) -> tuple[Verdict, str] | None:
    for dtype in record.dtypes or []:
        reason = dtypes.limit(backend, dtype)
        if reason:
            return Verdict.DTYPE, f"{dtype}: {reason}"
    return None
