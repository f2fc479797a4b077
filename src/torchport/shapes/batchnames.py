"""The names a script gives the loader's tensors: `targets` for `batch[1][1]` in
`for i, (imgs, targets, paths, _) in enumerate(loader):`.

The detector sees a batch as a structure (`batch[1][1]`); the script unpacks it in the `for`
statement, and a remedy is written in the script's own words (`mark_dynamic(targets, 0)`). The
names are read from the loop's source, once, when the report is written: where the target does
not unpack that far (`for batch in loader:`), the name is the loop variable and the rest of the
path (`batch['input_ids']`); where it cannot be read (no source, `*rest`, `_`), the path stays.
"""

from __future__ import annotations

import ast

from torchport.pyast import parse_quietly

ROOT = "batch"  # how signatures.tensor_paths names the whole batch


def loop_names(file: str, line: int, paths: list[str]) -> list[str]:
    """The script's name for each path (the path itself where the loop does not say)."""
    target = _loop_target(file, line)
    return [_name(target, path) or path for path in paths] if target is not None else list(paths)


def _loop_target(file: str, line: int) -> ast.expr | None:
    try:
        with open(file, "rb") as handle:
            tree = parse_quietly(handle.read(), file)
    except OSError:
        return None
    if tree is None:
        return None
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.AsyncFor))
             and node.lineno <= line <= node.iter.end_lineno]
    return max(loops, key=lambda node: node.lineno).target if loops else None


def _name(target: ast.expr, path: str) -> str | None:
    keys = _keys(path)
    if keys is None:
        return None
    node = target
    for depth, key in enumerate(keys):
        if isinstance(node, ast.Name):
            return _spelled(node.id, keys[depth:])
        if not (isinstance(node, (ast.Tuple, ast.List)) and isinstance(key, int) and key < len(node.elts)):
            return None
        if any(isinstance(element, ast.Starred) for element in node.elts[:key + 1]):
            return None
        node = node.elts[key]
    return _spelled(node.id, []) if isinstance(node, ast.Name) else None


def _spelled(name: str, keys: list) -> str | None:
    if name == "_":
        return None
    return name + "".join(f"[{key!r}]" for key in keys)


def _keys(path: str) -> list | None:
    """`batch[1]['img']` -> [1, 'img']; None for anything else."""
    try:
        node = ast.parse(path, mode="eval").body
    except SyntaxError:
        return None
    keys = []
    while isinstance(node, ast.Subscript):
        try:
            keys.append(ast.literal_eval(node.slice))
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == ROOT):
        return None
    return list(reversed(keys))
