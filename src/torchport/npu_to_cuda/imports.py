"""The file's torch_npu imports, once the walk knows what it converted: a name still used as
written keeps its import (with a row: what needs it), the others go; `import torch_npu` stays
while anything of torch.npu is left. What the new code reads (torch, torchport.optim, the
kernels' reference functions) is written after the imports."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from torchport.findings import Operation
from torchport.npu_to_cuda import changes, names, optimizers
from torchport.npu_to_cuda.edits import Edits, code
from torchport.npu_to_cuda.reading import Reader


class ImportWalk(Reader):
    """The part of the conversion's walk (collect.py) that `decide` reads: the file's torch_npu
    imports, as the walk meets them, and the NPU uses it leaves as written."""

    def __init__(self) -> None:
        super().__init__()
        # (line, name) of NPU uses left as written that need torch_npu (not those the file's own fallback stands for)
        self.unconverted: list[tuple[int, str]] = []
        self.imports: list[cst.Import | cst.ImportFrom] = []  # those of torch_npu (and of NpuFused optimizers)
        self.binds_torch = False  # whether an import other than `import torch.npu` binds torch

    def visit_Import(self, node: cst.Import) -> bool:  # noqa: N802
        if any(names.is_npu_name(code(alias.name)) for alias in node.names):
            self.imports.append(node)
        self.binds_torch |= any(alias.asname is None and code(alias.name).split(".")[0] == names.TORCH
                                and not names.is_npu_name(code(alias.name)) for alias in node.names)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:  # noqa: N802
        module = code(node.module) if node.module is not None and not node.relative else ""
        if names.is_npu_name(module) or (module and self._imports_npu_optimizer(node, module)):
            self.imports.append(node)
        return False

    def _imports_npu_optimizer(self, node: cst.ImportFrom, module: str) -> bool:
        return not isinstance(node.names, cst.ImportStar) and any(
            optimizers.constructor(f"{module}.{code(alias.name)}") for alias in node.names)


def decide(walk: ImportWalk, edits: Edits) -> None:
    """Drop the aliases (and statements) of torch_npu imports nothing unconverted reads."""
    touched = edits.touched()
    for statement in walk.imports:
        if isinstance(statement.names, cst.ImportStar):
            imported = code(statement.module)
            edits.row(walk.line(statement), changes.IMPORTS, Operation.UNSUPPORTED,
                      f"from {imported} import *: kept; name what the file uses to convert it", imported)
            continue
        kept, users = _still_needed(walk, statement, touched)
        gone = [alias for alias in statement.names if alias not in kept]
        binding = _kept_as_import_torch(walk, edits, statement, gone)
        gone = [alias for alias in gone if alias not in binding]
        for alias in gone:
            _removed(walk, edits, statement, alias)
        needed = [alias for alias in kept if _is_npu_alias(statement, alias)]
        if needed:
            _kept_row(walk, edits, statement, needed[0], users)
        if not kept and not binding:
            edits.dropped.add(statement)
        elif gone:
            edits.fix(statement, _without(gone, statement))


def _still_needed(walk: ImportWalk, statement, touched: set) -> tuple[list[cst.ImportAlias], set[int]]:
    """The aliases that stay (what is not torch_npu's: the apex conversion's), and the lines that
    still read torch_npu's."""
    kept, users = [], set()
    for alias in statement.names:
        if not _is_npu_alias(statement, alias):
            kept.append(alias)
            continue
        # (`import torch.npu` binds torch: what it imports is needed while torch.npu is)
        used = set() if _binds_torch(statement, alias) else _unconverted_uses(walk, statement, alias, touched)
        if _imports_the_package(statement, alias) and walk.unconverted:  # (torch.npu exists through it)
            used |= {line for line, _ in walk.unconverted}
        if used:
            kept.append(alias)
            users |= used
    return kept, users


def _kept_as_import_torch(walk: ImportWalk, edits: Edits, statement, gone: list) -> list[cst.ImportAlias]:
    """`import torch.npu`, the file's only import of torch: it stays, as `import torch`."""
    binding = [alias for alias in gone if _binds_torch(statement, alias) and not walk.binds_torch][:1]
    if binding:
        edits.fix(binding[0].name, lambda _: cst.Name(names.TORCH))
        edits.row(walk.line(statement), changes.IMPORTS, Operation.MODIFY,
                  f"{_spelled(statement, binding[0])} -> import torch: the file's import of torch", code(binding[0].name))
        walk.binds_torch = True
    return binding


def _removed(walk: ImportWalk, edits: Edits, statement, alias: cst.ImportAlias) -> None:
    what = _spelled(statement, alias)
    imported = code(statement.module) if isinstance(statement, cst.ImportFrom) else ""
    if imported and names.is_transfer(f"{imported}.{code(alias.name)}"):
        why = "transfer_to_npu redirects CUDA code to the NPU at run time: the file is CUDA code"
    else:
        why = "nothing of it is left in the file"
    edits.row(walk.line(statement), changes.IMPORTS, Operation.DELETE, f"remove {what}: {why}", what)
    edits.dropped.add(alias)


def _kept_row(walk: ImportWalk, edits: Edits, statement, alias: cst.ImportAlias, users: set[int]) -> None:
    shown = ", ".join(str(n) for n in sorted(users))
    message = f"keep {_spelled(statement, alias)}: line {shown} still uses torch_npu as written"
    fallback = (walk.fallback_line(statement, _bound_name(alias)) if walk.guarded(statement) else None)
    if fallback is not None:
        message += f"; in its try: without torch_npu the file's own fallback (line {fallback}) runs instead"
    edits.row(walk.line(statement), changes.IMPORTS, Operation.UNSUPPORTED, message, names.PACKAGE)


def _bound_name(alias: cst.ImportAlias) -> str:
    return code(alias.asname.name) if alias.asname else code(alias.name).split(".")[0]


def _imports_the_package(statement, alias: cst.ImportAlias) -> bool:
    """`import torch_npu`, `import torch_npu as tnpu`, `import torch_npu.npu` (not `import torch_npu.npu.amp as a`)."""
    return isinstance(statement, cst.Import) and (alias.asname is None or code(alias.name) == names.PACKAGE)


def _binds_torch(statement, alias: cst.ImportAlias) -> bool:
    return isinstance(statement, cst.Import) and alias.asname is None and code(alias.name).split(".")[0] == names.TORCH


def _is_npu_alias(statement, alias: cst.ImportAlias) -> bool:
    if isinstance(statement, cst.Import):
        return names.is_npu_name(code(alias.name))
    module = code(statement.module)
    return names.is_npu_name(module) or optimizers.constructor(f"{module}.{code(alias.name)}") is not None


def _spelled(statement, alias: cst.ImportAlias) -> str:
    name = code(alias.name) + (f" as {code(alias.asname.name)}" if alias.asname else "")
    if isinstance(statement, cst.Import):
        return f"import {name}"
    return f"from {code(statement.module)} import {name}"


def _without(gone: list[cst.ImportAlias], original):
    gone_code = {code(alias.name) + (code(alias.asname) if alias.asname else "") for alias in gone}

    def fix(updated):
        left = [a for a in updated.names if code(a.name) + (code(a.asname) if a.asname else "") not in gone_code]
        if not left:
            return updated
        left[-1] = left[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=left)

    return fix


def _unconverted_uses(walk: ImportWalk, statement, alias: cst.ImportAlias, touched: set) -> set[int]:
    """The lines that read what `alias` binds outside anything the walk converted."""
    scope = walk.get_metadata(ScopeProvider, statement, None)
    if scope is None:
        return set()
    bound = code(alias.asname.name) if alias.asname else code(alias.name).split(".")[0]
    lines = set()
    for assignment in scope.assignments[bound]:
        if getattr(assignment, "node", None) is not statement:
            continue
        for access in assignment.references:
            if not _inside(walk, access.node, touched):
                lines.add(walk.line(access.node))
    return lines


def _inside(walk: ImportWalk, node: cst.CSTNode, touched: set) -> bool:
    while node is not None:
        if node in touched:
            return True
        node = walk.parent(node)
    return False


# -- what the new code needs, after the imports --
def add_needed(module: cst.Module, edits: Edits) -> cst.Module:
    needed = sorted({"torch" if m == "torch" or m.startswith("torch.") else m for m in edits.modules})
    missing = [m for m in needed if not _imports(module, m)]
    statements = [cst.parse_statement(f"import {m}\n") for m in missing]
    helpers = [cst.parse_statement(source + "\n") for source in edits.helpers.values()
               if not _defines(module, source)]
    if not statements and not helpers:
        return module
    at = _after_imports(module.body)
    body = list(module.body)
    new = list(statements)
    for index, helper in enumerate(helpers):
        blank = [cst.EmptyLine(), cst.EmptyLine()] if index or at or statements else []
        new.append(helper.with_changes(leading_lines=blank))
    if helpers and at < len(body):
        following = body[at]
        body[at] = following.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(),
                                                         *_comments_only(following.leading_lines)])
    return module.with_changes(body=[*body[:at], *new, *body[at:]])


def _comments_only(lines):
    return [line for line in lines if line.comment is not None]


def _imports(module: cst.Module, name: str) -> bool:
    """Whether the module binds `name` (torch, torchport.optim) at its top level."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        alias.asname is None and (code(alias.name) == name or code(alias.name).startswith(name + "."))
                        for alias in small.names):
                    return True
    return False


def _defines(module: cst.Module, source: str) -> bool:
    name = source.split("(", 1)[0].split()[-1]
    return any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in module.body)


def _after_imports(body) -> int:
    """The index after the leading docstring, imports and guarded imports (`try: import ...`)."""
    at = 0
    for index, statement in enumerate(body):
        if _is_import(statement) or (index == 0 and _is_docstring(statement)):
            at = index + 1
        elif isinstance(statement, (cst.Try, cst.If)) and all(_is_import(s) for s in statement.body.body):
            at = index + 1
        else:
            break
    return at


def _is_import(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))
