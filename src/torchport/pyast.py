"""Small readings of Python's own `ast` that several layers share (the rewriter's index finder,
the third-party scanner)."""

from __future__ import annotations

import ast
import warnings

# What `ast.parse` raises on source it cannot read: bad syntax, null bytes, an unknown or wrong
# declared encoding, nesting too deep for the parser.
AST_PARSE_ERRORS = (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError, MemoryError)


def parse_quietly(source: bytes | str, filename: str = "<unknown>") -> ast.Module | None:
    """`source`'s tree, None where Python cannot read it; its warnings (invalid escapes and the
    like, in someone else's code) are not ours to print."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=filename)
    except AST_PARSE_ERRORS:
        return None


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
