"""A file's apex imports, wherever they sit (top level, a function, `try: ... except ImportError:`),
and what each binds: `from apex import amp`, `import apex`, `import apex.amp as amp`,
`from apex.parallel import DistributedDataParallel as DDP`, `from apex.optimizers import FusedAdam`."""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch.changes import (AMP_INITIALIZE, FUSED_NORMALIZATION, FUSED_OPTIMIZERS, PARALLEL_MODULES,
                                             Unconvertible)
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import (Edits, Read, code, dotted, first_code, is_docstring, is_future_import,
                                        is_import_line, statements, walk)
from torchport.findings import Operation

APEX = apex.APEX

# What a failed apex import is caught as (`except ImportError:`, and what scripts write instead).
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


class ApexImport(NamedTuple):
    statement: cst.SimpleStatementLine  # the line the import is on
    node: cst.Import | cst.ImportFrom
    module: str  # the module it names: "apex", "apex.parallel"


def module_of(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias | None = None) -> str:
    if isinstance(node, cst.ImportFrom):
        return "." * len(node.relative) + ((dotted(node.module) or "") if node.module is not None else "")
    return dotted(alias.name) or ""


def is_apex_module(module: str) -> bool:
    return module == apex.APEX or module.startswith(apex.APEX + ".")


def apex_imports(found: Read, stars: bool = False) -> list[ApexImport]:
    """Each import of apex in the file (`stars`: `from apex.x import *` too, else it is unconvertible)."""
    result = []
    for node in found.walk(found.module):
        if isinstance(node, cst.ImportFrom) and is_apex_module(module_of(node)):
            if isinstance(node.names, cst.ImportStar) and not stars:
                raise Unconvertible(found.line(node), f"from {module_of(node)} import *: the names it binds are not known")
            result.append(ApexImport(found.statement_of(node), node, module_of(node)))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if is_apex_module(module_of(node, alias)):
                    result.append(ApexImport(found.statement_of(node), node, module_of(node, alias)))
    return result


def imported_names(item: ApexImport) -> list[str]:
    """The apex names an import brings in: `from apex.parallel import DistributedDataParallel as
    DDP` -> apex.parallel.DistributedDataParallel; `import apex.amp` -> apex.amp; a star import:
    its module."""
    node = item.node
    if isinstance(node, cst.Import):
        return [module_of(node, alias) for alias in node.names if is_apex_alias(node, alias)]
    if isinstance(node.names, cst.ImportStar):
        return [item.module]
    return [f"{item.module}.{dotted(alias.name)}" for alias in node.names]


def is_apex_alias(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> bool:
    return is_apex_module(module_of(node) if isinstance(node, cst.ImportFrom) else module_of(node, alias))


def only_apex(statement: cst.CSTNode) -> bool:
    """A line of apex imports and nothing else."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) and not isinstance(s.names, cst.ImportStar)
        and all(is_apex_alias(s, a) for a in s.names) for s in statement.body)


def catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    return all(dotted(k.value if isinstance(k, cst.Element) else k) in IMPORT_ERRORS for k in kinds)


def is_flag(statement: cst.CSTNode) -> bool:
    """`has_apex = True`: a statement that cannot fail, so needs no `try` around it."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return isinstance(statement, cst.SimpleStatementLine) and all(_is_constant_assignment(s) for s in statement.body)
    return _is_constant_assignment(statement.body[0]) or isinstance(statement.body[0], cst.Pass)


def _is_constant_assignment(small: cst.BaseSmallStatement) -> bool:
    return (isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets)
            and isinstance(small.value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))
            and (not isinstance(small.value, cst.Name) or small.value.value in ("True", "False", "None")))


# The conversion's code for an import by the apex module it names.
CODES = {"apex.optimizers": FUSED_OPTIMIZERS.code, "apex.parallel": PARALLEL_MODULES.code,
         "apex.normalization": FUSED_NORMALIZATION.code}


def code_for(module: str) -> str:
    return next((c for prefix, c in CODES.items() if module == prefix or module.startswith(prefix + ".")),
                AMP_INITIALIZE.code)


def rewrite_imports(text: str, plan) -> tuple[str, list[Change]]:
    """The apex imports removed (an optimizer's import becomes its torchport.optim twin's); a `try`
    left holding only its flags (`has_apex = True`) unwrapped; the modules the written code reads
    imported."""
    found = read(text)
    edits, changes, gone = Edits(), [], set()
    kept = _kept(found, plan)
    for line_node in _apex_lines(found):
        new_body = []
        for small in line_node.body:
            new = _without_apex(small, plan, kept) if isinstance(small, (cst.Import, cst.ImportFrom)) else small
            if isinstance(new, list):  # (names the target's apex has kept, beside torchport.optim's twins)
                new_body += new
                new = new[-1]
            elif new is not None:
                new_body.append(new)
            if new is not small:
                line = found.line(small)
                module = module_of(small) if isinstance(small, cst.ImportFrom) else \
                    next(module_of(small, a) for a in small.names if is_apex_alias(small, a))
                what = _what(new, plan)
                changes.append(Change(line, line, code_for(module), Operation.MODIFY if new else Operation.DELETE,
                                      f"apex import {what}", module))
        if new_body:
            edits.replace(line_node, line_node.with_changes(body=new_body))
        else:
            edits.remove(line_node)
            gone.add(line_node)
    for holder in _holders(found, gone):
        changes += _unwrap(found, edits, holder, gone)
    changes += _needed(found, edits, plan)
    return edits.apply(found), changes


def _what(new, plan) -> str:
    if new is None:
        return "removed: nothing is left that reads it"
    if isinstance(new, cst.ImportFrom) and is_apex_module(module_of(new)):
        return "cut to the names the target's own apex build has: the others are native now"
    if isinstance(new, cst.Import):
        return "cut to what the target's own apex build has: the rest is native now"
    return "-> its torchport.optim twin"


def _apex_lines(found: Read) -> list[cst.SimpleStatementLine]:
    lines = []
    for item in apex_imports(found):
        if item.statement not in lines:
            lines.append(item.statement)
    return lines


def _kept(found: Read, plan) -> set[str]:
    """The names bound by apex imports that stay: those the target's own apex build has (the
    plan's `keep`) and the file still reads."""
    if not plan.keep:
        return set()
    read_names = {n.value for n in found.walk(found.module) if isinstance(n, cst.Name) and not _in_import(found, n)}
    kept = set()
    for item in apex_imports(found):
        aliases = item.node.names if not isinstance(item.node.names, cst.ImportStar) else ()
        for alias, name in zip(aliases, imported_names(item)) if isinstance(item.node, cst.ImportFrom) else \
                ((a, module_of(item.node, a)) for a in aliases if is_apex_alias(item.node, a)):
            if _bound(alias).split(".")[0] in read_names and apex.in_build(name, plan.keep):
                kept.add(id(alias))
    return kept


def _in_import(found: Read, node: cst.CSTNode) -> bool:
    parent = found.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, (cst.Import, cst.ImportFrom)):
            return True
        parent = found.parent(parent)
    return False


def _without_apex(node: cst.Import | cst.ImportFrom, plan, kept: set[int] = frozenset()):
    """The import with its apex names gone (None: nothing left) but those `kept` (ids of aliases
    the target's apex build has), or a from-import of the torchport.optim twins that replace the
    apex optimizers it named (a list: the kept names' import, then the twins')."""
    if isinstance(node, cst.Import):
        left = [a for a in node.names if not is_apex_alias(node, a) or id(a) in kept]
        if len(left) == len(node.names):
            return node
        return node.with_changes(names=_last_without_comma(left)) if left else None
    if not is_apex_alias(node, node.names[0]):
        return node
    left = [a for a in node.names if id(a) in kept]
    twins = sorted({n for a in node.names for n in plan.imports.get(_bound(a), ())})
    own = node.with_changes(names=_last_without_comma(left)) if left else None
    if len(left) == len(node.names):
        return node
    if not twins:
        return own
    twin = cst.ImportFrom(module=cst.parse_expression("torchport.optim"), names=[cst.ImportAlias(cst.Name(n)) for n in twins])
    return [own, twin] if own is not None else twin


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return dotted(alias.name) or ""


def _last_without_comma(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    return [*aliases[:-1], aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


def _holders(found: Read, gone: set) -> list[cst.CSTNode]:
    holders = []
    for line_node in gone:
        holder = found.parent(found.parent(line_node))
        if isinstance(holder, (cst.Try, cst.If)) and holder not in holders:
            holders.append(holder)
    return holders


def _unwrap(found: Read, edits: Edits, holder, gone: set) -> list[Change]:
    """`try: from apex import amp; has_apex = True / except ImportError: has_apex = False` ->
    `has_apex = True` (the script takes its apex path, now native); a try or an `if` left empty
    goes."""
    left = [s for s in holder.body.body if s not in gone]
    line = found.line(holder)
    if isinstance(holder, cst.If):
        if not left and holder.orelse is None:
            edits.remove(holder)
            return [Change(line, line, AMP_INITIALIZE.code, Operation.DELETE, "the if that only imported apex removed",
                           APEX)]
        return []
    if not (all(catches_import_error(h) for h in holder.handlers) and holder.finalbody is None
            and all(is_flag(s) for s in left)):
        return []
    kept = [*left, *(holder.orelse.body.body if holder.orelse is not None else ())]
    if kept:
        kept[0] = kept[0].with_changes(leading_lines=[*holder.leading_lines, *kept[0].leading_lines])
        edits.insert_before(holder, kept)
    edits.remove(holder)
    if not kept:
        return [Change(line, line, AMP_INITIALIZE.code, Operation.DELETE,
                       "the try around the apex import removed: nothing is left in it", APEX)]
    flags = "; ".join(code(s).strip() for s in kept)
    return [Change(line, line, AMP_INITIALIZE.code, Operation.MODIFY,
                   f"the try around the apex import unwrapped ({flags}): the script takes its apex path, now native",
                   APEX)]


def _needed(found: Read, edits: Edits, plan) -> list[Change]:
    wanted = [m for m in ("torch", "torchport.optim") if m in plan.needs and not _imports_module(found, m)]
    if not wanted:
        return []
    new = statements("".join(f"import {m}\n" for m in wanted))
    last = _last_import(found.module)
    if last is not None:
        edits.insert_after(last, new)
        line = found.line(last)
    elif first_code(found.module) is not None:
        edits.insert_before(first_code(found.module), new)
        line = found.line(first_code(found.module))
    else:
        edits.append(found.module, new)
        line = 1
    return [Change(line, line, AMP_INITIALIZE.code, Operation.INSERT, f"import {m}: the native code reads it", m)
            for m in wanted]


def _last_import(module: cst.Module) -> cst.BaseStatement | None:
    """The last import line of the module's opening imports (before its first other statement)."""
    last = None
    for statement in module.body:
        if is_import_line(statement):
            last = statement
        elif last is not None or not (is_future_import(statement) or is_docstring(statement)):
            break
    return last


def _imports_module(found: Read, module: str) -> bool:
    for statement in found.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        (dotted(a.name) == module or (dotted(a.name) or "").startswith(module + ".")) and a.asname is None
                        for a in small.names):
                    return True
    return False
