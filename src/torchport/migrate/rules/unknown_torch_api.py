"""TP026: a torch name that does not exist in the pinned torch (a typo, or an API torch removed)."""

from __future__ import annotations

from torchport.findings import Finding, Operation
from torchport.migrate.rules.base.rule import TreeRule
from torchport.migrate.rules.base.torch_references import MENTIONS, Reference, references, spelled_any
from torchport.targets import Target
from torchport.targets.torch_api import Unknown, torch_api


class UnknownTorchApiRule(TreeRule):
    """A `torch.*` name (however imported) that torch does not have: it raises AttributeError or
    ImportError where it runs. The row names the nearest name that exists, or, for an API torch
    keeps only to raise that it is gone (`torch.solve`), its replacement. A name the data cannot
    judge (private, in a namespace that answers names at run time or that the data does not
    walk, an attribute of a class) is left alone; `torch.cuda` is the CUDA rules' (TP004)."""

    code = "TP026"
    order = 260
    mentions = MENTIONS
    title = "unknown torch APIs"
    readme = """a `torch.*` name (`torch.*`, `F.*`, `nn.*`, `from torch import ...`, however imported) that does not
    exist in the pinned torch: reported with the nearest name that does (`torch.from_tensor` → `torch.tensor`), or,
    for an API torch keeps only to raise that it is gone (`torch.solve`), its replacement; private names,
    namespaces that answer names at run time, and uses under `hasattr` / version tests / `try: ... except
    AttributeError` are left alone"""
    sample = "import torch\nx = torch.from_tensor([1.0])\n"

    @classmethod
    def rows(cls, source: bytes, target: Target, path: str) -> list[Finding]:
        api = torch_api()
        if not spelled_any(source, api.unknown):
            return []
        rows = []
        for reference in references(source):
            unknown = api.unknown(reference.api)
            if unknown is not None and _spelled_here(reference, unknown):
                rows.append(Finding(path, reference.line, reference.end_line, cls.code, Operation.UNKNOWN,
                                    _message(unknown, api.version), api=unknown.api))
        return list(dict.fromkeys(rows))


def _spelled_here(reference: Reference, unknown: Unknown) -> bool:
    """Whether the missing name is written at this reference, not in the import that bound its
    first name (`from torch import from_tensor` is reported there, not at each call). A removed
    function that an import names as a module is that module (`from torch.autograd.variable
    import Variable`: the file torch/autograd/variable.py, which the function shadows)."""
    if unknown.removed and (reference.module == unknown.api or reference.module.startswith(unknown.api + ".")):
        return False
    return reference.imported or len(unknown.api) > len(reference.bound)


def _message(unknown: Unknown, version: str) -> str:
    if unknown.removed:
        instead = f": use {unknown.nearest}" if unknown.nearest else ""
        return f"{unknown.api} was removed from torch; in torch {version} it only raises{instead}"
    nearest = f"; nearest: {unknown.nearest}" if unknown.nearest else ""
    return f"{unknown.api} does not exist in torch {version}{nearest}"
