"""The import statements of a migrated module: CUDA ones no longer used go, what new code uses comes.

LibCST's RemoveImportsVisitor and AddImportsVisitor do this with a copy of the module and a scope
analysis, which on a large file costs more than all the rules together. Only top-level import
statements change here, so these functions rebuild the module's top level alone; which names are
still used is read from the new code with `ast`. They give what those visitors give, but for one
difference on purpose: a name counts as used wherever it is loaded (even where a function
shadows it) and wherever a string spells it, so an import is sometimes kept where the scope
analysis would have dropped it, and never dropped where it was needed.
"""

from __future__ import annotations

import ast
import re
import sys

import libcst as cst
import libcst.matchers as m

from torchport.apis.cuda_module import DEVICE_MODULE, MODULE_NAME
from torchport.migrate.rules.base.nodes import source_of
from torchport.pyast import AST_PARSE_ERRORS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def cuda_imports(module: cst.Module):
    """(module, name, asname) for each top-level import that brings in torch.cuda or part of it."""
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    name = source_of(alias.name)
                    if name == "torch.cuda" or name.startswith("torch.cuda."):
                        yield (name, None, alias.evaluated_alias)
            elif isinstance(stmt, cst.ImportFrom) and stmt.module is not None and not isinstance(stmt.names, cst.ImportStar):
                source = source_of(stmt.module)
                for alias in stmt.names:
                    name = alias.evaluated_name
                    if source.startswith(DEVICE_MODULE) or (source == "torch" and name == MODULE_NAME):
                        yield (source, name, alias.evaluated_alias)


def _top_level_import_index(module: cst.Module, predicate) -> int | None:
    for index, line in enumerate(module.body):
        if isinstance(line, cst.SimpleStatementLine) and any(predicate(s) for s in line.body):
            return index
    return None


def imports_torch(stmt: cst.BaseSmallStatement) -> bool:
    """`import torch`, `import torch.x`, `from torch... import ...`."""
    if isinstance(stmt, cst.Import):
        return any(source_of(a.name).split(".")[0] == "torch" for a in stmt.names)
    if isinstance(stmt, cst.ImportFrom) and stmt.module is not None and not stmt.relative:
        return source_of(stmt.module).split(".")[0] == "torch"
    return False


def binds(module: cst.Module, name: str) -> bool:
    """Whether a top-level `import name` (or `import name.sub`) binds `name`."""
    return _top_level_import_index(
        module,
        lambda s: isinstance(s, cst.Import)
        and any(a.asname is None and source_of(a.name).split(".")[0] == name for a in s.names),
    ) is not None


def insert_after_torch_import(module: cst.Module, name: str) -> cst.Module:
    """`import name` (a package that extends torch, such as torch_npu) with the other packages'
    imports where torch's are among them, else right after the first top-level torch import
    (or, with none, where `add` puts it)."""
    index = _top_level_import_index(module, imports_torch)
    if index is None or index < _first_block_end(module):
        return add(module, [name])
    body = list(module.body)
    body.insert(index + 1, cst.parse_statement(f"import {name}"))
    return module.with_changes(body=body)


def _first_block_end(module: cst.Module) -> int:
    """Where the module's first block of import lines ends (past a docstring)."""
    end = 1 if _skip_first(module) else 0
    while end < len(module.body) and m.matches(module.body[end], m.SimpleStatementLine(body=[m.ImportFrom() | m.Import()])):
        end += 1
    return end


def insert_after_imports(module: cst.Module, statement: str) -> cst.Module:
    """Insert after the last top-level import that comes before any def, class or block, and
    never above the module's first import of torch, which the statement may use: where torch
    comes later (YOLOv5's train.py imports it after a `try: import comet_ml` block), after the
    run of import lines that holds that import (or after the block that holds it)."""
    last = None
    for index, line in enumerate(module.body):
        if not isinstance(line, cst.SimpleStatementLine):
            break
        if any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in line.body):
            last = index
    body = list(module.body)
    at = max(0 if last is None else last + 1, _after_torch_import(module))
    new = cst.parse_statement(statement)
    if isinstance(new, (cst.FunctionDef, cst.ClassDef)):  # (set apart by two blank lines, as PEP 8 has it)
        new = new.with_changes(leading_lines=[cst.EmptyLine()] * 2)
        if at < len(body):
            body[at] = _apart(body[at])
    body.insert(at, new)
    return module.with_changes(body=body)


def _after_torch_import(module: cst.Module) -> int:
    """The index past the module's first top-level import of torch and the import lines that
    follow it (past the whole block, where a `try:` or an `if` holds it); 0 where torch is not
    imported at the top level."""
    for index, line in enumerate(module.body):
        if isinstance(line, cst.SimpleStatementLine) and any(imports_torch(s) for s in line.body):
            end = index + 1
            while end < len(module.body) and _is_import_line(module.body[end]):
                end += 1
            return end
        if isinstance(line, (cst.Try, cst.If)) and _block_imports_torch(line):
            return index + 1
    return 0


def _is_import_line(line: cst.CSTNode) -> bool:
    return isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in line.body)


def _block_imports_torch(block: cst.CSTNode) -> bool:
    """Whether a `try:` or `if` block (any of its branches, not the functions in it) imports torch."""
    for child in block.children:
        if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(child, cst.BaseSmallStatement) and imports_torch(child):
            return True
        if not isinstance(child, cst.BaseSmallStatement) and _block_imports_torch(child):
            return True
    return False


def _apart(statement: cst.BaseStatement) -> cst.BaseStatement:
    """`statement` with at least two blank lines before it (and its own comments kept)."""
    lines, blank = list(statement.leading_lines), 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    missing = max(0, 2 - blank)
    return statement.with_changes(leading_lines=[cst.EmptyLine()] * missing + lines)


def has_statement(module: cst.Module, statement: str) -> bool:
    """Whether a top-level statement reads exactly `statement` (a function or a class: is
    defined, by name)."""
    for keyword, kind in (("def ", cst.FunctionDef), ("class ", cst.ClassDef)):
        if statement.startswith(keyword):
            name = statement[len(keyword):].partition("(")[0].partition(":")[0]
            return any(isinstance(line, kind) and line.name.value == name for line in module.body)
    return any(
        isinstance(line, cst.SimpleStatementLine) and module.code_for_node(line).strip() == statement
        for line in module.body
    )


def used_names(module: cst.Module) -> set[str] | None:
    """Names the module loads, plus every word inside its strings (`__all__`, string annotations);
    None if the code does not parse (it is then not written: see source.py)."""
    return names_used_in(module.code)


def names_used_in(code: str) -> set[str] | None:
    """`used_names` of a module's code (or of a piece of it: the pieces' names make the whole's)."""
    try:
        tree = ast.parse(code)
    except AST_PARSE_ERRORS:
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.update(_WORD.findall(node.value))
    return names


def remove_unused(
    module: cst.Module, unused: list[tuple[str, str | None, str | None]], used: set[str] | None = None,
) -> tuple[cst.Module, bool]:
    """`module` without those of `unused` (RemoveImportsVisitor's (module, name, asname) triples)
    that nothing refers to any more; and whether anything was removed. `used`: the names used,
    where `module` does not hold all the code (a skeleton: pieces.py)."""
    used = used_names(module) if used is None else used
    if used is None:
        return module, False
    modules = {(name, asname) for name, obj, asname in unused if obj is None}
    objects = {(source, obj, asname) for source, obj, asname in unused if obj is not None}

    def keep(stmt: cst.BaseSmallStatement, alias: cst.ImportAlias) -> bool:
        if isinstance(stmt, cst.Import):
            if (alias.evaluated_name, alias.evaluated_alias) not in modules:
                return True
            bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
        else:
            if (source_of(stmt.module), alias.evaluated_name, alias.evaluated_alias) not in objects:
                return True
            bound = alias.evaluated_alias or alias.evaluated_name
        return bound in used

    body, removed = [], False
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            body.append(line)
            continue
        statements, changed = [], False
        for stmt in line.body:
            names = _import_names(stmt)
            kept = names if names is None else [alias for alias in names if keep(stmt, alias)]
            if names is None or len(kept) == len(names):
                statements.append(stmt)
                continue
            changed = True
            if kept:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                statements.append(stmt.with_changes(names=kept))
        if not changed:
            body.append(line)
            continue
        removed = True
        if statements:
            statements[-1] = statements[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            body.append(line.with_changes(body=statements))
    return (module.with_changes(body=body) if removed else module), removed


def _import_names(stmt: cst.BaseSmallStatement) -> list[cst.ImportAlias] | None:
    """The aliases of an import statement that may lose some (not `*`, not relative)."""
    if isinstance(stmt, cst.Import):
        return list(stmt.names)
    if isinstance(stmt, cst.ImportFrom) and stmt.module is not None and not stmt.relative and not isinstance(stmt.names, cst.ImportStar):
        return list(stmt.names)
    return None


def add(module: cst.Module, names: list[str]) -> cst.Module:
    """`import name` for each of `names`, where isort puts it: in its section of the module's
    first block of imports (the standard library's, or that of the other packages), in order
    among the plain imports there. A section the block lacks is made, set apart by a blank line;
    a module without imports gets them at its top (past a docstring), a blank line after them."""
    body = list(module.body)
    start, end = (1 if _skip_first(module) else 0), _first_block_end(module)
    if start == end:  # (none yet: they open the module, a blank line after them)
        new = [cst.parse_statement(f"import {name}") for name in sorted(names)]
        after = [_after_a_blank_line(body[end])] if end < len(body) else []
        return module.with_changes(body=[*body[:start], *new, *after, *body[end + 1:]])
    for name in sorted(names):
        at, apart = _place(body[start:end], name)
        body.insert(start + at, cst.parse_statement(f"import {name}"))
        end += 1
        _set_apart(body, start + at, apart, before_an_import=start + at < end - 1)
    return module.with_changes(body=body)


# Where a new import stands in its block, as isort orders them.
_FUTURE, _STANDARD, _OTHERS, _LOCAL = range(4)


def _section(statement: cst.SimpleStatementLine) -> int:
    """isort's section of an import line: __future__, the standard library, other packages, relative."""
    imported = statement.body[0]
    if isinstance(imported, cst.ImportFrom):
        if imported.relative:
            return _LOCAL
        name = source_of(imported.module)
    else:
        name = source_of(imported.names[0].name)
    root = name.split(".")[0]
    if root == "__future__":
        return _FUTURE
    return _STANDARD if root in sys.stdlib_module_names else _OTHERS


def _is_plain(statement: cst.SimpleStatementLine) -> bool:
    return isinstance(statement.body[0], cst.Import)


def _sort_key(statement: cst.SimpleStatementLine) -> str:
    return source_of(statement.body[0].names[0].name).lower()


def _place(block: list[cst.SimpleStatementLine], name: str) -> tuple[int, str]:
    """(the index in `block` where `import name` goes, how it is set apart: "" in the middle of
    its section, "before" / "after" where it opens a section of its own before / after the others)."""
    section = _STANDARD if name.split(".")[0] in sys.stdlib_module_names else _OTHERS
    sections = [_section(statement) for statement in block]
    mine = [i for i, s in enumerate(sections) if s == section]
    if not mine:
        later = next((i for i, s in enumerate(sections) if s > section), None)
        return (len(block), "after") if later is None else (later, "before")
    plain = [i for i in mine if _is_plain(block[i])]
    if not plain:  # (isort puts plain imports before the `from` ones of their section)
        return mine[0], ""
    key = name.lower()
    after = [i for i in plain if _sort_key(block[i]) < key]
    return (after[-1] + 1, "") if after else (plain[0], "")


def _set_apart(body: list, at: int, apart: str, before_an_import: bool) -> None:
    """Give the import just put at `at` the blank lines of its place: put first in the section
    of the import that follows it (or in a section of its own before that one), the blank lines
    that kept that import apart from what went before go above it (comments stay with their
    statement); a new section gets a blank line of its own."""
    if apart == "after":
        body[at] = _after_a_blank_line(body[at])
    if not before_an_import:
        return
    new, following = body[at], body[at + 1]
    if apart != "before" and _section(following) != _section(new):
        return
    lines = list(following.leading_lines)
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    body[at] = new.with_changes(leading_lines=lines[:blank])
    body[at + 1] = following.with_changes(leading_lines=lines[blank:])
    if apart == "before":
        body[at + 1] = _after_a_blank_line(body[at + 1])


def _after_a_blank_line(statement: cst.BaseStatement) -> cst.BaseStatement:
    """`statement` with a blank line above it (and above its own comments), unless it has one."""
    lines = statement.leading_lines
    if lines and lines[0].comment is None:
        return statement
    return statement.with_changes(leading_lines=(cst.EmptyLine(), *lines))


def _skip_first(module: cst.Module) -> bool:
    """A docstring or a `__strict__` flag opens the module: nothing goes in front of it."""
    return bool(module.body) and m.matches(
        module.body[0],
        m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name("__strict__"))])])
        | m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())]),
    )
