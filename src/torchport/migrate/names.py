"""What the names in a file refer to, read from its imports: `tc.synchronize` is `torch.cuda.synchronize`.

LibCST's QualifiedNameProvider answers this with a full scope analysis, which costs about four
times the parse. Nearly every file binds the names that matter (`torch`, `cuda`, `autocast`)
by imports alone, and then its import statements say everything. `ImportTable.of` reads them
with `ast`; when a name that imports bind to something in torch is also bound another way
(assigned, a parameter, imported twice differently), it returns None and the caller uses the
scope analysis instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class ImportTable:
    bindings: dict[str, str]  # local name -> what it refers to ("tc" -> "torch.cuda")

    @classmethod
    def of(cls, source: bytes | str) -> ImportTable | None:
        """The file's import table, or None when its names need a scope analysis (or it does not parse)."""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError, MemoryError):
            return None
        imported: dict[str, set[str]] = {}
        other: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        imported.setdefault(alias.asname, set()).add(alias.name)
                    else:
                        root = alias.name.split(".")[0]
                        imported.setdefault(root, set()).add(root)
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name != "*":
                        prefix = module if module.endswith(".") else module + "."
                        imported.setdefault(alias.asname or alias.name, set()).add(prefix + alias.name)
            else:
                other.update(_bound_names(node))
        for name, targets in imported.items():
            if any(t == "torch" or t.startswith("torch.") for t in targets) and (len(targets) > 1 or name in other):
                return None
        return cls({name: next(iter(targets)) for name, targets in imported.items() if len(targets) == 1})

    def qualified_name(self, dotted: str) -> str | None:
        """What `dotted` (e.g. `tc.synchronize`) refers to, if its first name was imported."""
        root, _, rest = dotted.partition(".")
        target = self.bindings.get(root)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target


def _bound_names(node: ast.AST) -> list[str]:
    """Names `node` binds, other than by an import."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []
