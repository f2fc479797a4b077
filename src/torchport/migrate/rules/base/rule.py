"""The rule protocol: what a rule declares on its class, what it reads of a node, what it records.

A rule never edits the tree: it records a `Finding` and, for a change, a fix (context.py). What
a name refers to comes from the file's imports (names.py), with LibCST's scope analysis only
where those cannot tell.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from torchport.findings import Finding, Operation
from torchport.import_table import ImportTable
from torchport.migrate.rules.base.context import FileContext, Fix
from torchport.migrate.rules.base.nodes import dotted_name, source_of
from torchport.targets import Target


class Rule:
    """A rewrite rule. Subclasses set `code` and write their docstring as the rule's description.

    A class with a `code`, in a module of the rules package, is a rule: the registry finds it
    there (registry.py), so that a new rule is one new file. Everything else kept about a rule
    is declared here too: its place among the others, its row in the README's table, and a
    sample that sets it off.

    `visit_<Node>(node)` and `leave_<Node>(node)` methods are called by `RulesPass`, as in a
    LibCST visitor (a `visit_` method's return value is ignored: every rule sees every node).
    """

    code: ClassVar[str] = ""
    # Where the rule runs among the others, lowest first (the fixes of two rules on one node
    # compose in this order). Numbers leave gaps, so that a new rule slots in between: the
    # rewriting rules from 10 to 999, the advice (rows only) from 1000.
    order: ClassVar[int] = 0
    title: ClassVar[str] = ""  # a few words for the terminal summary
    readme: ClassVar[str] = ""  # the rule's row in the README's table (tools/rule_table.py writes it)
    # A small source the rule has something to say about, on at least one target (test_safety.py
    # migrates it, on every target, twice).
    sample: ClassVar[str] = ""
    # What a file must contain for the rule to have anything to do (a bytes regex): the
    # pre-filter that spares parsing most files is built from these (source.py).
    mentions: ClassVar[bytes] = b""
    # The qualified names (or their beginnings) the rule acts on. A name whose meaning only a
    # scope analysis can tell is looked up only if one of its meanings could be among these.
    reads: ClassVar[tuple[str, ...]] = ("",)
    # What a top-level statement says when this rule follows the module-level names it binds to
    # their uses (a scope analysis): in a file migrated in pieces, such a statement and every
    # later one that mentions those names go in one piece (pieces.py).
    follows: ClassVar[bytes] = b""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.target = context.target

    @classmethod
    def applies_to(cls, target: Target) -> bool:
        """Whether the rule can have anything to say on `target` (its text then joins that
        target's pre-filter, and it joins the walk)."""
        return True

    # --- reading -------------------------------------------------------------------------
    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """The fully qualified name `node` refers to (`tc.synchronize` -> `torch.cuda.synchronize`)."""
        inner = node
        while isinstance(inner, cst.Attribute):
            inner = inner.value
        if not isinstance(inner, cst.Name):  # `f().x` names an attribute of a result, not an API
            return None
        imports = self.context.imports
        if imports is not None and (inner.value not in imports.ambiguous or self._outside_shadowing(node, inner.value)):
            if inner.value not in imports.bindings and inner.value != "torch":
                return None  # (most names: the script's own variables)
            known = self.context.qualified_names
            if node in known:
                return known[node]
            name = None if self.is_bound_here(node) else self._imported_name(node, inner, imports)
            if node in self.context.parents:  # (asked before the walk reached it, its place is not known yet)
                known[node] = name  # the same for every rule that asks: worked out once
            return name
        if self.is_bound_here(node):
            return None
        if imports is not None and inner.value in imports.ambiguous:
            dotted = source_of(node)
            meanings = imports.meanings(dotted)
            if not any(m.startswith(r) or r.startswith(m) for m in meanings for r in self.reads):
                return None  # whichever binding a use sees, it is nothing this rule acts on
        names = self.context.metadata(QualifiedNameProvider, node, set())
        if not names and inner.value == "torch":
            return source_of(node)
        torch_names = sorted(n.name for n in names if n.name.startswith("torch"))
        return torch_names[0] if torch_names else None

    def imported_name(self, node: cst.CSTNode) -> str | None:
        """What `node` (a name or a dotted name) refers to by the file's imports, any library's
        (`qualified_name` answers for torch's alone): `L.Trainer` -> `lightning.Trainer`."""
        imports, dotted = self.context.imports, dotted_name(node)
        if imports is None or dotted is None or dotted.split(".")[0] not in imports.bindings or self.is_bound_here(node):
            return None
        return imports.qualified_name(dotted)

    def _outside_shadowing(self, node: cst.CSTNode, name: str) -> bool:
        """Whether `node` lies in none of the functions and classes that bind `name` another way
        than the module's import (then it sees that import: names.py's `shadowed_in`)."""
        shadowing = self.context.imports.shadowed_in.get(name)
        if shadowing is None:
            return False
        parents = self.context.parents
        enclosing = []
        while node in parents:
            node = parents[node]
            enclosing.append(node)
        if node is not self.context.module:  # not reached by the walk yet: it lies below the node
            enclosing = self.context.walking  # being visited, so that node's ancestors are its own
        return not any(
            isinstance(outer, (cst.FunctionDef, cst.ClassDef)) and outer.name.value in shadowing for outer in enclosing
        )

    def _imported_name(self, node: cst.CSTNode, inner: cst.Name, imports: ImportTable) -> str | None:
        if not self._is_reference(node):
            return None
        if inner.value not in imports.bindings:
            # `torch` used without being imported (a star import, or a broken file): read the
            # name as written, so that a second pass, after we add `import torch`, agrees.
            return dotted_name(node) if inner.value == "torch" else None
        name = imports.qualified_name(dotted_name(node))
        return name if name is not None and name.startswith("torch") else None

    def _is_reference(self, node: cst.CSTNode) -> bool:
        """Whether `node` is an expression that refers to something, not a name that is only
        spelled like one (`x.cuda`'s `cuda`, a keyword, a parameter, a def's name, `as` names)."""
        if not isinstance(node, cst.Name):
            return True
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute):
            return parent.attr is not node
        if isinstance(parent, cst.Arg):
            return parent.keyword is not node
        if isinstance(parent, (cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef)):
            return parent.name is not node
        return not isinstance(parent, (cst.NameItem, cst.ImportAlias))

    def is_bound_here(self, node: cst.CSTNode) -> bool:
        """Whether `node` is a name being (re)bound or deleted, not read: the target of an
        assignment, `for`, `with ... as`, `del` or comprehension (`GradScaler = None` in an
        `except ImportError:` is the script's own fallback, not a use of torch's class)."""
        child, parent = node, self.parent(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            child, parent = parent, self.parent(parent)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del, cst.For, cst.CompFor)):
            return parent.target is child
        if isinstance(parent, cst.AsName):
            return parent.name is child
        return isinstance(parent, cst.NamedExpr) and parent.target is child

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.context.parents.get(node)

    def guarded_already(self, node: cst.CSTNode) -> bool:
        """Whether `node` (an expression, or a statement line) runs only under the target's
        guard already: it lies in the body of an `if` or a conditional expression that asks it,
        as written by a first migration (a second must not guard it again) or as the script's
        CUDA question that becomes it (`... if torch.cuda.is_available() else ...`)."""
        if self.target.guard is None:
            return False
        child, parent = node, self.parent(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(parent, (cst.IfExp, cst.If)) and parent.body is child and self.asks_guard(parent.test):
                return True
            child, parent = parent, self.parent(parent)
        return False

    def asks_guard(self, test: cst.BaseExpression) -> bool:
        """Whether `test` holds only where the target's guard does: the guard itself, the CUDA
        question that becomes it, or an `and` of which one side is either."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self.asks_guard(test.left) or self.asks_guard(test.right)
        if not isinstance(test, cst.Call) or test.args:
            return False
        api = self.qualified_name(test.func)
        if api is not None and api.startswith("torch.cuda."):
            return f"{self.target.verdict(api).replacement}()" == self.target.guard
        return source_of(test) == self.target.guard

    def scope(self, node: cst.CSTNode):
        """LibCST's scope of `node` (computed for the whole file the first time a rule asks)."""
        return self.context.metadata(ScopeProvider, node)

    # --- recording -----------------------------------------------------------------------
    def change(
        self,
        node: cst.CSTNode,
        fix: Fix,
        message: str,
        *,
        operation: Operation = Operation.MODIFY,
        api: str = "",
        needs: str = "",
    ) -> None:
        """Record an edit of `node` (and a change_list row). `needs`: the generated source."""
        self.context.add_fix(node, fix, self.code, needs)
        self.report(node, operation, message, api=api)

    def report(
        self, node: cst.CSTNode, operation: Operation, message: str, *, api: str = "", replacement: str = "", category: str = ""
    ) -> None:
        self.context.reported.append((node, self.code, operation, message, api, replacement, category))


class TokenRule(Rule):
    """A rule that rewrites a file's tokens before it is parsed: for code that neither LibCST nor
    Python (since 3.7) can parse, but that one exact change makes valid (`x.cuda(async=True)`).
    `rewrite` gets the whole file when it matches `mentions`; the rule joins no walk."""

    @classmethod
    def rewrite(cls, source: bytes, path: str) -> tuple[bytes, list[Finding]]:
        """`source` rewritten, and a row for each change (same lines: only tokens change)."""
        raise NotImplementedError


class TreeRule(Rule):
    """A rule that only writes rows, read from the file's `ast` tree: it joins neither the
    pre-filter of the LibCST pass nor its walk, so that a file it reads is not parsed by LibCST
    for its sake, nor kept whole by the elision. `mentions` is its own pre-filter: `rows` gets the
    whole file (after the token rules) only when it matches."""

    @classmethod
    def rows(cls, source: bytes, target: Target, path: str) -> list[Finding]:
        raise NotImplementedError


class ApiReferenceRule(Rule):
    """A rule about references to APIs under `prefix`, however they were imported.

    It sees each whole dotted name once (`tc.synchronize`, not also `tc`), never the names
    inside import statements, and never attributes of call results.
    """

    prefix: ClassVar[str] = ""

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        self._visit_reference(node)

    def visit_Name(self, node: cst.Name) -> None:  # noqa: N802
        self._visit_reference(node)

    def _visit_reference(self, node: cst.BaseExpression) -> None:
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # part of a longer dotted name: that one is visited
        api = self.qualified_name(node)
        if api is None or not api.startswith(self.prefix):
            return
        while isinstance(parent, (cst.Attribute, cst.Name)):
            parent = self.parent(parent)
        if isinstance(parent, (cst.ImportAlias, cst.ImportFrom, cst.Import)):
            return
        self.visit_api(node, api)

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        raise NotImplementedError
