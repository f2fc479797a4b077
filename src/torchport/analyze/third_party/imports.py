"""The import statements of a project's file, each with its line and whether the code does without it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchport.analyze.third_party.names import absolute
from torchport.pyast import dotted_name

# What a handler must catch for the imports in its `try` to be optional (a bare `except:` too).
_CATCHES_MISSING = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


@dataclass(frozen=True)
class ImportSite:
    line: int
    module: str  # absolute: "cv2", "torchvision.models", "pkg.ops" for `from .ops import x` in pkg/
    names: tuple[str, ...]  # `from module import a, b`: ("a", "b"), which may be modules too; () for `import`
    relative: bool  # `from . import x`: the project's own, by how it is written
    optional: bool  # inside try/except ImportError (or contextlib.suppress(ImportError))

    @property
    def top(self) -> str:
        return self.module.partition(".")[0]

    def candidates(self) -> list[str]:
        """The modules this import may load: the module, and each name taken from it (a name
        may be a submodule: `from pkg import _C`)."""
        return [self.module, *(f"{self.module}.{name}" for name in self.names if name != "*")]


def import_sites(tree: ast.Module, package: list[str]) -> list[ImportSite]:
    """Every import statement of a parsed file, in order; relative ones resolved against
    `package` (the file's package inside the project: ["pkg"] for pkg/mod.py), and left out
    where they climb above it."""
    sites: list[ImportSite] = []
    _read_block(tree.body, package, False, sites)
    return sites


def _read_block(body: list[ast.stmt], package: list[str], optional: bool, sites: list[ImportSite]) -> None:
    """The imports of a block and of the blocks inside it, functions and classes too; only
    statements are visited (imports are statements, and expressions are most of a tree)."""
    for node in body:
        if isinstance(node, ast.Import):
            sites += [ImportSite(node.lineno, alias.name, (), False, optional) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node, package)
            if module is not None:
                names = tuple(alias.name for alias in node.names)
                sites.append(ImportSite(node.lineno, module, names, node.level > 0, optional))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            guarded = any(_catches_missing(handler.type) for handler in node.handlers)
            _read_block(node.body, package, optional or guarded, sites)
            for handler in node.handlers:  # a fallback import is needed where the first one fails
                _read_block(handler.body, package, optional, sites)
            _read_block(node.orelse, package, optional, sites)
            _read_block(node.finalbody, package, optional, sites)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            guarded = any(_suppresses_missing(item.context_expr) for item in node.items)
            _read_block(node.body, package, optional or guarded, sites)
        else:
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(node, name, None)
                if isinstance(inner, list):
                    _read_block(inner, package, optional, sites)
            for case in getattr(node, "cases", ()):
                _read_block(case.body, package, optional, sites)


def _catches_missing(handler_type: ast.expr | None) -> bool:
    if handler_type is None:
        return True
    if isinstance(handler_type, ast.Tuple):
        return any(_catches_missing(element) for element in handler_type.elts)
    name = dotted_name(handler_type)
    return name is not None and name.rpartition(".")[2] in _CATCHES_MISSING


def _suppresses_missing(expression: ast.expr) -> bool:
    """`contextlib.suppress(ImportError)`, however `suppress` was imported."""
    if not isinstance(expression, ast.Call):
        return False
    name = dotted_name(expression.func)
    return (name is not None and name.rpartition(".")[2] == "suppress"
            and any(_catches_missing(argument) for argument in expression.args))
