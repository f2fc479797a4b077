"""Small readings of Python's own `ast` that several layers share (the rewriter's index finder,
the third-party scanner)."""

from __future__ import annotations

import ast

# What `ast.parse` raises on source it cannot read: bad syntax, null bytes, an unknown or wrong
# declared encoding, nesting too deep for the parser.
AST_PARSE_ERRORS = (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError, MemoryError)


def dotted_name(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of names (`ast.Name` under `ast.Attribute`s), else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
