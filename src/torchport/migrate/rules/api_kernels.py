"""TP027: a torch API whose aten operator has no kernel on the target."""

from __future__ import annotations

from functools import lru_cache

from torchport.findings import Finding, Operation
from torchport.migrate.rules.base.rule import TreeRule
from torchport.migrate.rules.base.torch_references import MENTIONS, references, spelled_any
from torchport.ops import kernels
from torchport.targets import Target
from torchport.targets.kernels import CUDA, Kernels
from torchport.targets.torch_api import torch_api


def without_kernel(api: str, target: Target) -> str | None:
    """Why `api` ('torch.mode') cannot run on `target`'s device with a kernel of its own, where
    the data says so: it is one aten operator, CUDA (where the code comes from) runs it, and no
    overload of it but the out= variants has a kernel on the target. None where it has one, or
    where that cannot be said (an API of several operators, kernels the data does not list)."""
    return None if target.kernels is None else _without_kernel(api, target.kernels)


@lru_cache(maxsize=4096)  # (the names of every file that uses torch are asked about: most are the same)
def _without_kernel(api: str, listed: Kernels) -> str | None:
    operator = torch_api().operator(api)
    if operator is None:
        return None
    data = kernels.default()
    if not data.operator_support(operator, CUDA.key).supported:
        return None  # (no dense CUDA kernel either: a sparse or quantized op, or another backend's own)
    support = data.operator_support(operator, listed.key)
    return support.how if support.supported is False else None


class ApiKernelRule(TreeRule):
    """A torch API (however imported) that is one aten operator (from torch's bindings, see
    tools/gen_api.py) which CUDA runs and the target has no kernel for in the kernel data
    `ops check` reads: the row says what happens there instead (`Kernels.without_kernel`). An API
    that is several operators, or whose kernels the data does not list (XPU's, registered by
    torch-xpu-ops), gets no row: which kernels it needs is not known."""

    code = "TP027"
    order = 270
    mentions = MENTIONS
    title = "torch APIs without a kernel"
    readme = """a torch API (`torch.mode`, `F.adaptive_max_pool3d`, `torch.linalg.eig`, however imported) whose aten
    operator (from torch's own bindings) CUDA runs but the target has no kernel for, in the kernel data `ops check`
    reads: what happens there instead (MPS: an error, or the CPU with `PYTORCH_ENABLE_MPS_FALLBACK=1`; npu:
    torch_npu's CPU fallback); APIs of several operators and kernels the data does not list say nothing"""
    sample = "import torch\nvalues, indices = torch.mode(torch.ones(3))\n"

    @classmethod
    def applies_to(cls, target: Target) -> bool:
        return target.kernels is not None

    @classmethod
    def rows(cls, source: bytes, target: Target, path: str) -> list[Finding]:
        if not spelled_any(source, lambda name: without_kernel(name, target)):
            return []
        rows = []
        for reference in references(source):
            why = None if reference.imported else without_kernel(reference.api, target)
            if why is not None:
                operator = torch_api().operator(reference.api)
                rows.append(Finding(path, reference.line, reference.end_line, cls.code, Operation.UNSUPPORTED,
                                    _message(reference.api, operator, why, target), api=reference.api))
        return list(dict.fromkeys(rows))


def _message(api: str, operator: str, why: str, target: Target) -> str:
    instead = target.kernels.without_kernel
    return f"{api} runs aten::{operator}: {why}" + (f"; {instead}" if instead else "")
