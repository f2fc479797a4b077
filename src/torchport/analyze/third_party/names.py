"""What the names of one file refer to, through its imports: read with `ast`, scope by scope."""

from __future__ import annotations

import ast
from typing import Iterator


def aliases(body: list[ast.stmt], package: list[str]) -> dict[str, str]:
    """Local name -> what it was imported as, from the imports of one scope (a module, function
    or class body, not the functions inside it): `tc` -> `torch.cuda`, `load` ->
    `torch.utils.cpp_extension.load`. Relative imports resolve against `package`. The first
    import of a name in the scope wins; a scope's names hide those of the scopes around it."""
    found: dict[str, str] = {}
    for node in statements(body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found.setdefault(alias.asname, alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    found.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node, package)
            for alias in node.names:
                if source and alias.name != "*":
                    found.setdefault(alias.asname or alias.name, f"{source}.{alias.name}")
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of one scope, nested blocks too, in order (not those of functions and
    classes inside it). Imports are statements, and skipping expressions (most of a file's
    nodes) halves the cost of a scan."""
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        yield statement
        if isinstance(statement, _SCOPES):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                pending.extend(reversed(inner))


def absolute(node: ast.ImportFrom, package: list[str]) -> str | None:
    """The module a `from ... import` names, relative ones resolved against `package` (None: above it)."""
    if node.level == 0:
        return node.module
    if node.level - 1 > len(package):
        return None
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base) or None
