"""What the conversion reads of a file: its tree with the metadata every step asks (qualified
names of imported things, lines, parents, scopes). Lines and parents come from the file's layout,
as every rewriting step reads them (layout.py); the rest is LibCST's scope analysis. (The import
table the other steps read names from tells a name bound another way too only for torch's names:
the conversion's, torch_npu's, would be read through a parameter or a local of the same name.)"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import (Assignment, ExpressionContext, ExpressionContextProvider, QualifiedNameProvider,
                             QualifiedNameSource, ScopeProvider)

from torchport.layout import Layout


class Reader(cst.CSTVisitor):
    """A visitor with the file's metadata, and the questions the steps ask of it (`layout`: the
    layout of the tree it walks, set before the walk)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ExpressionContextProvider)
    layout: Layout

    def line(self, node: cst.CSTNode) -> int:
        return self.layout.lines[node][0]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.layout.parents.get(node)

    def imported(self, node: cst.CSTNode) -> str | None:
        """The qualified name of an imported thing (`torch_npu.npu.set_device`), else None."""
        if not _dotted(node):  # (`torch.randn(3).npu` names no imported thing)
            return None
        names = self.get_metadata(QualifiedNameProvider, node, set())
        found = sorted(n.name for n in names if n.source is QualifiedNameSource.IMPORT)
        return found[0] if found else None

    def fallback_line(self, node: cst.CSTNode, name: str | None = None) -> int | None:
        """The first line where the file itself binds the root name of `node` (or `name`, seen
        from `node`) too (`except ImportError: torch_npu = None`, a class defined in its place);
        None where it does not."""
        while isinstance(node, cst.Attribute):
            node = node.value
        if name is None:
            if not isinstance(node, cst.Name):
                return None
            name = node.value
        scope = self.get_metadata(ScopeProvider, node, None)
        while scope is not None:
            lines = [self.line(a.node) for a in scope.assignments[name]
                     if isinstance(a, Assignment) and not isinstance(a.node, (cst.Import, cst.ImportFrom))]
            if lines:
                return min(lines)
            scope = scope.parent if scope.parent is not scope else None
        return None

    def guarded(self, statement: cst.CSTNode) -> bool:
        """Whether an import sits in a `try:` that catches its ImportError."""
        node = self.parent(statement)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            if isinstance(node, cst.Try):
                return any(_catches_import_error(handler) for handler in node.handlers)
            node = self.parent(node)
        return False

    def loaded(self, node: cst.CSTNode) -> bool:
        return self.get_metadata(ExpressionContextProvider, node, None) is ExpressionContext.LOAD

    def outermost(self, node: cst.CSTNode) -> bool:
        """Whether `node` is a whole dotted chain (not `torch.npu` of `torch.npu.synchronize`, nor
        the attribute name `synchronize` itself)."""
        parent = self.parent(node)
        return not (isinstance(parent, cst.Attribute) and (parent.value is node or parent.attr is node))


def _dotted(node: cst.CSTNode) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


CATCHES = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for kind in kinds:
        value = kind.value if isinstance(kind, cst.Element) else kind
        if isinstance(value, (cst.Name, cst.Attribute)) and _EMPTY.code_for_node(value).split(".")[-1] in CATCHES:
            return True
    return False


_EMPTY = cst.Module(body=[])
