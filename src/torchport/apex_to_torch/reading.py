"""One parse of a text with what the conversion looks up in it: lines, parents, and the apex
name each name or attribute chain stands for.

The apex names are resolved through the file's apex imports alone (`from apex import amp` makes
`amp.scale_loss` "apex.amp.scale_loss"), without LibCST's scope analysis: a local name spelled
like an apex import is taken for apex, which at worst sends the file to the stand-in package.
That reading is four times cheaper, and each step reads the text it is given once (cached: a
step that changes nothing hands the next one the same reading)."""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from torchport.distribute.edits import Read, dotted, walk
from torchport.layout import Layout

APEX = "apex"


@lru_cache(maxsize=8)
def read(text: str) -> "Source":
    return Source(text, *Read.tree_made(text))  # (the tree the last step's edits made, when this is its text: no parse)


class Source(Read):
    """distribute's `Read`, with apex names resolved from the imports (see the module's note)."""

    def __init__(self, text: str, module: cst.Module | None = None, layout: Layout | None = None):  # noqa: super().__init__ is what this class saves
        self.text = text
        self._module = module if module is not None else cst.parse_module(text)
        self._layout = layout if layout is not None else Layout(self.module)
        self._bound = _apex_bindings(self.walk(self.module))

    def walk(self, node: cst.CSTNode, into_scopes: bool = True):
        """distribute.edits.walk over this reading's tree, from its layout (LibCST's `children`
        visits a node each time it is asked)."""
        return walk(node, into_scopes, self._layout)

    def calls(self, node: cst.CSTNode, into_scopes: bool = True):
        return (n for n in self.walk(node, into_scopes) if isinstance(n, cst.Call))

    def qualified(self, node: cst.CSTNode) -> set[str]:
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is None or not self._reads(node):
            return set()
        first, _, rest = name.partition(".")
        if first not in self._bound:
            return set()
        return {f"{self._bound[first]}.{rest}" if rest else self._bound[first]}

    def _reads(self, node: cst.CSTNode) -> bool:
        """A name read as a value (not an attribute's name, a keyword, a target or a definition)."""
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return False
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.AsName, cst.ImportAlias)):
            return False
        return not (isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For))
                    and getattr(parent, "target", None) is node)


def _apex_bindings(nodes) -> dict[str, str]:
    """local name -> the apex name an import binds it to."""
    bound = {}
    for node in nodes:
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                and not isinstance(node.names, cst.ImportStar):
            source = dotted(node.module) or ""
            if source == APEX or source.startswith(APEX + "."):
                for alias in node.names:
                    name = dotted(alias.name)
                    bound[alias.asname.name.value if alias.asname else name] = f"{source}.{name}"
        elif isinstance(node, cst.Import):
            for alias in node.names:
                name = dotted(alias.name) or ""
                if name == APEX or name.startswith(APEX + "."):
                    if alias.asname is not None:
                        bound[alias.asname.name.value] = name
                    else:
                        bound[name.split(".")[0]] = APEX
    return bound
