"""TP029: CUDA-only kernel packages (flash-attn, xformers, bitsandbytes and flash-attn's compiled
extensions) imported where they cannot be installed."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import libcst as cst

import torchport
from torchport.apis.kernels_llm import SERVED_WHY, STAND_INS, no_stand_in_advice
from torchport.findings import Operation
from torchport.migrate.rules.base.nodes import dotted_name
from torchport.migrate.rules.base.rule import Rule
from torchport.migrate.rules.base.torch_references import GUARDING_ERRORS
from torchport.targets.devices import CUDA_DEVICE_TYPE

_PACKAGES = "|".join(re.escape(name) for name in STAND_INS)
_SOURCE_ROOT = Path(torchport.__file__).resolve().parent.parent  # (the folder holding the torchport package)


class KernelStandInRule(Rule):
    """flash-attn, xformers and bitsandbytes are CUDA builds: on any other device the import fails
    and the script with it. Each import becomes the import of torchport's stand-in, which computes
    the same on torch (attention on `scaled_dot_product_attention`, the 8-bit optimizers as
    torch.optim's 32-bit ones, norms, rotary and cross-entropy on torch), as `torchport run`
    serves them; on accelerator, where the code may still run on CUDA, the package is tried first
    and the stand-in imported only where it is missing. An import inside the script's own
    `try: ... except ImportError:` is left to that fallback; a part of a package the stand-in does
    not cover is left, with the way out."""

    code = "TP029"
    order = 280
    mentions = rb"\b(?:%s)\b" % _PACKAGES.encode()
    title = "CUDA-only kernel packages"
    readme = """`from flash_attn import flash_attn_func`, `import xformers.ops as xops`, `import bitsandbytes as bnb`
    → the same names from `torchport.compat` (on torch: SDPA, torch.optim); accelerator: tried after the
    package itself (`try: ... except ImportError:`); a part without a stand-in stays, with its row"""
    sample = "import torch\nfrom flash_attn import flash_attn_func\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.device_type != CUDA_DEVICE_TYPE

    def visit_Import(self, node: cst.Import) -> None:  # noqa: N802
        aliases = [(alias, dotted_name(alias.name) or "") for alias in node.names]
        served = [(alias, name) for alias, name in aliases if _package(name)]
        if not served or self._own_fallback(node):
            return
        missing = [name for _, name in served if not _has_module(_stand_in(name))]
        if missing:
            self._unsupported(node, missing[0])
            return
        bare = [name for alias, name in served if alias.asname is None and "." in name]
        if bare:  # (`import flash_attn.ops.rms_norm` binds flash_attn: no one-to-one import of the stand-in does)
            self._unsupported(node, bare[0], f"write `from {bare[0]} import ...` or `import {bare[0]} as ...`, "
                                             f"which torchport rewrites")
            return

        def renamed(alias: cst.ImportAlias) -> cst.ImportAlias:
            name = dotted_name(alias.name) or ""
            if not _package(name):
                return alias
            asname = alias.asname or cst.AsName(name=cst.Name(name))
            return alias.with_changes(name=cst.parse_expression(_stand_in(name)), asname=asname)

        self._replace(node, lambda updated: updated.with_changes(names=[renamed(a) for a in updated.names]),
                      ", ".join(name for _, name in served))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:  # noqa: N802
        if node.relative or node.module is None:
            return
        name = dotted_name(node.module) or ""
        if not _package(name) or self._own_fallback(node):
            return
        module = _stand_in(name)
        names = None if isinstance(node.names, cst.ImportStar) else [dotted_name(a.name) or "" for a in node.names]
        lacking = _lacking(module, names)
        if lacking is not None:
            self._unsupported(node, f"{name}.{lacking}" if lacking else name)
            return
        self._replace(node, lambda updated: updated.with_changes(module=cst.parse_expression(module)), name)

    def _replace(self, node, fix, names: str) -> None:
        package = names.split(".")[0].split(",")[0].strip()
        why = SERVED_WHY.get(package, "a CUDA build")
        statement = self.parent(node)
        alone = (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                 and isinstance(self.parent(statement), (cst.Module, cst.IndentedBlock)))
        if self.target.device_chosen_at_run_time and alone:  # (accelerator: the real kernels where they are installed)
            def tried(line: cst.SimpleStatementLine) -> cst.Try:
                fallback = line.with_changes(body=[fix(line.body[0])], leading_lines=[])
                return cst.Try(
                    body=cst.IndentedBlock(body=[line.with_changes(leading_lines=[])]),
                    handlers=[cst.ExceptHandler(body=cst.IndentedBlock(body=[fallback]),
                                                type=cst.Name("ImportError"))],
                    leading_lines=line.leading_lines)

            self.change(statement, tried, f"{names}: where it is not installed, torchport's stand-in ({why}); "
                                          "torchport must be installed where the script runs")
            return
        self.change(node, fix, f"{names} -> torchport.compat: {why}; torchport must be installed where the "
                               "script runs")

    def _unsupported(self, node, name: str, advice: str | None = None) -> None:
        self.report(node, Operation.UNSUPPORTED, f"import {name}: {advice or no_stand_in_advice(name)}", api=name)

    def _own_fallback(self, node: cst.CSTNode) -> bool:
        """Whether `node` is inside a `try` whose handlers catch a failed import: the script
        falls back by itself (its own path is taken where the package is missing). A handler that
        only raises again (`raise ImportError("pip install bitsandbytes")`) is no fallback."""
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, cst.Try) and child is parent.body:
                catching = [h for h in parent.handlers if h.type is None or _caught(h.type) & GUARDING_ERRORS]
                if any(not _raises(handler) for handler in catching):
                    self.report(node, Operation.NOTE, "left: the script falls back by itself where the package "
                                                      "is missing (its `except` around the import)")
                    return True
            child, parent = parent, self.parent(parent)
        return False


def _raises(handler: cst.ExceptHandler) -> bool:
    """Whether the handler ends by raising (after logging, say): the script has no path of its own."""
    last = handler.body.body[-1] if isinstance(handler.body, cst.IndentedBlock) else handler.body
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(last.body[-1], cst.Raise)


def _caught(expression: cst.BaseExpression) -> set[str]:
    if isinstance(expression, cst.Tuple):
        return {name for element in expression.elements for name in _caught(element.value)}
    name = dotted_name(expression) or ""
    return {name.rsplit(".", 1)[-1]}


def _package(name: str) -> bool:
    return name.split(".")[0] in STAND_INS


def _stand_in(name: str) -> str:
    top, _, rest = name.partition(".")
    return f"{STAND_INS[top]}.{rest}" if rest else STAND_INS[top]


@lru_cache(maxsize=None)
def _module_file(module: str) -> Path | None:
    base = _SOURCE_ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _has_module(module: str) -> bool:
    return _module_file(module) is not None


@lru_cache(maxsize=None)
def _defined(module: str) -> frozenset[str] | None:
    """The names `module` (a stand-in) defines at its top level, read from its source without
    importing it (it imports torch); None: any name (a module that makes its names from a table
    with `globals().update`, as bitsandbytes.optim makes its optimizers; its `__getattr__` names
    what it lacks where it is asked for). A module `__getattr__` that serves submodules alone
    (compat._kernels_log.module_getattr) adds none."""
    text = _module_file(module).read_text(encoding="utf-8")
    if "globals().update(" in text:
        return None
    tree = ast.parse(text)
    names = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == "__getattr__":
                return None
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
    return frozenset(names)


def _lacking(module: str, names: list[str] | None) -> str | None:
    """The first of `names` the stand-in `module` lacks ("" for the module itself), or None when
    it has them all (a submodule counts as a name of its package)."""
    if not _has_module(module):
        return ""
    defined = _defined(module)
    for name in names or ():
        if defined is not None and name not in defined and not _has_module(f"{module}.{name}"):
            return name
    return None
