"""PyTorch 0.3's one-element results under run. Before 0.4 a loss was a tensor of one element and
`loss.data[0]` read its number (so did `prec1[0]` of an accuracy); since 0.4 such a result has no
dimension, and indexing it raises IndexError on every device. In the files of code from before 0.4
(those whose `async=` run renames in memory, and those that read `.data[0]`), run compiles each
`x[0]` as a call that answers what PyTorch 0.3 answered: the number of a tensor with no dimension,
`x[0]` of anything else. The file's own lines stay where they were (tracebacks show them); nothing
is written to disk.
"""

from __future__ import annotations

import ast
import re
import sys
import types

from torchport.runtime.calllog import short_path
from torchport.targets.verdict import Kind, Verdict

_READS_DATA_0 = re.compile(rb"\.data\s*\[\s*0\s*\]")
_NAME = "__torchport_first__"
ADAPTED = Verdict("x[0]", Kind.ADAPTED, "x.item()",
                  "of a tensor with no dimension: PyTorch before 0.4 gave one-element results, read "
                  "so (loss.data[0]); run reads their number in memory")

_log = None
_noted: set[tuple[str, int]] = set()


def reads_one_element_results(source: bytes) -> bool:
    """Whether `source` reads `.data[0]`, PyTorch 0.3's way to the number of a loss."""
    return _READS_DATA_0.search(source) is not None


def compiled(source: bytes, path: str, log) -> types.CodeType:
    """`source` compiled with each `x[0]` read through `first`, which logs to `log`."""
    global _log
    _log = log
    tree = _FirstItems().visit(ast.parse(source, path))
    tree.body.insert(_after_future_imports(tree), _import_first())
    return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)


def first(value):
    """`value[0]`, or, for a tensor with no dimension, its number (as PyTorch 0.3 answered)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor) or value.dim() != 0:
        return value[0]
    caller = sys._getframe(1)
    site = (caller.f_code.co_filename, caller.f_lineno)
    if _log is not None and site not in _noted:
        _noted.add(site)
        _log.note_at(f"{short_path(site[0])}:{site[1]}", ADAPTED)
    return value.item()


class _FirstItems(ast.NodeTransformer):
    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        index = node.slice
        if not (isinstance(node.ctx, ast.Load) and isinstance(index, ast.Constant)
                and type(index.value) is int and index.value == 0):
            return node
        call = ast.Call(ast.Name(_NAME, ast.Load()), [node.value], [])
        return ast.copy_location(call, node)


def _import_first() -> ast.stmt:
    return ast.ImportFrom("torchport.runtime.legacy_scalars", [ast.alias("first", _NAME)], 0)


def _after_future_imports(tree: ast.Module) -> int:
    """Where a statement may go: after the docstring and the `from __future__` imports."""
    at = 0
    for at, statement in enumerate(tree.body):
        docstring = at == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if not (docstring or isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
            return at
    return len(tree.body)
