"""What every rule shares: one traversal, findings instead of edits, and the edits kept apart.

All rules share a single walk of a file (`RulesPass`). A rule never edits the tree: it records
a `Finding` and, for a change, a *fix*: a function from the (already updated) node to its
replacement. `ApplyFixes` runs them bottom-up, so fixes on nested nodes compose.

The walk itself keeps what rules ask about a node: its parent and what its name refers to
(from the file's imports, see names.py). The lines of a finding are computed once, after the
walk, for the nodes that have findings only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, ScopeProvider

from torchport.findings import Finding, Operation
from torchport.migrate.lines import node_lines
from torchport.migrate.names import ImportTable
from torchport.migrate.rules.folding import folded_number, left_doing_nothing, number_value
from torchport.targets import Target
from torchport.targets.base import definitions_used, dotted_names, modules_used


Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]
Fix = Callable[[cst.CSTNode], Replacement]


class _MetadataReader(cst.MetadataDependent):
    """Reads resolved metadata the way a visitor would (LibCST computes some values lazily)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.metadata = {}


class NameAnalysisError(Exception):
    """LibCST's scope analysis failed on this file (it happens on odd code): copy it as is.
    The failure itself is the exception's ``__cause__``."""


@dataclass
class FileContext:
    """State the rules of one file share: the target, findings, fixes and what the file now needs."""

    target: Target
    path: str
    fixes: dict[cst.CSTNode, list[Fix]] = field(default_factory=lambda: defaultdict(list))
    needed_imports: set[str] = field(default_factory=set)  # modules the rewritten code refers to
    needed_definitions: set[str] = field(default_factory=set)  # the target's module-level names used
    module: cst.Module | None = None  # the module the rules walk
    imports: ImportTable | None = None  # None (or an ambiguous name): resolved by a scope analysis
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)  # filled by RulesPass
    walking: list[cst.CSTNode] = field(default_factory=list)  # RulesPass's way down to the node it visits
    wrapper: MetadataWrapper | None = None  # for a scope analysis, made on first need
    metadata_reader: _MetadataReader | None = None
    reported: list[tuple] = field(default_factory=list)  # (node, code, operation, message, api, replacement, category)
    device_index_names: frozenset[str] = frozenset()  # names that hold a CUDA device index (device_indices.py)
    device_names: frozenset[str] = frozenset()  # names that hold a device or its name (device_holders.py)
    apply_affinity: bool = False  # perform the affinity swaps that keep behaviour (migrate --apply-affinity)
    whole_source: bytes = b""  # the whole file, as read (the rules may walk a reduced one: see elide.py)
    qualified_names: dict[cst.CSTNode, str | None] = field(default_factory=dict)  # Rule.qualified_name's answers
    statement_lines: Sequence[int] | None = None  # where the module's top-level statements start (lines.py)
    once: set[str] = field(default_factory=set)  # what was reported once for the file (its pieces share it)
    # the whole file's top-level import lines, where the rules walk it in pieces (pieces.py)
    file_imports: Sequence[cst.SimpleStatementLine] | None = None

    def first_time(self, what: str) -> bool:
        """Whether `what` (a row that a file gets once) is not reported yet: True once a file,
        in whichever piece of it comes first."""
        if what in self.once:
            return False
        self.once.add(what)
        return True

    def top_level_imports(self) -> Sequence[cst.SimpleStatementLine]:
        """The file's top-level statement lines that import something (all of the file's, where
        the rules walk it in pieces)."""
        if self.file_imports is not None:
            return self.file_imports
        return [
            line for line in self.module.body
            if isinstance(line, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in line.body)
        ]

    def need_expression(self, source: str) -> None:
        """Record the imports and target definitions that a piece of generated code relies on."""
        definitions = self.target.definitions
        for name in definitions_used(definitions, source):
            if name not in self.needed_definitions:
                self.needed_definitions.add(name)
                self.needed_imports.update(m for m in modules_used(definitions[name]) if m not in definitions)
        self._need_imports(source)

    def _need_imports(self, source: str) -> None:
        for dotted in dotted_names(source):
            root = dotted.split(".")[0]
            if root not in self.target.definitions:
                self.needed_imports.add(dotted.rsplit(".", 1)[0] if root != "torch" else "torch")

    def metadata(self, provider, node: cst.CSTNode, default=None):
        """LibCST metadata for `node`, computed (for the whole module) on first need."""
        try:
            if self.wrapper is None:
                self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
                self.metadata_reader = _MetadataReader()
            if provider not in self.metadata_reader.metadata:
                self.metadata_reader.metadata[provider] = self.wrapper.resolve(provider)
            return self.metadata_reader.get_metadata(provider, node, default)
        except Exception as error:  # (it fails on some odd code)
            raise NameAnalysisError from error

    def findings(self) -> list[Finding]:
        """The rows reported so far, with their lines."""
        lines = node_lines(self.module, {node for node, *_ in self.reported}, self.statement_lines, self.parents)
        rows = [
            Finding(self.path, *lines.get(node, (0, 0)), code, operation, message, *extra)
            for node, code, operation, message, *extra in self.reported
        ]
        return sorted(dict.fromkeys(rows), key=lambda f: (f.start_line, f.code))  # (two alike on one line: one row)


class Rule:
    """A rewrite rule. Subclasses set `code` and write their docstring as the rule's description.

    `visit_<Node>(node)` and `leave_<Node>(node)` methods are called by `RulesPass`, as in a
    LibCST visitor (a `visit_` method's return value is ignored: every rule sees every node).
    """

    code: ClassVar[str] = ""
    title: ClassVar[str] = ""  # a few words for the terminal summary
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
        self.context.fixes[node].append(fix)
        if needs:
            self.context.need_expression(needs)
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


class RulesPass(cst.CSTVisitor):
    """One walk of a module for all rules: records each node's parent, then calls the rules."""

    def __init__(self, rules: list[Rule]) -> None:
        super().__init__()
        self.visitors: dict[str, list[Callable]] = defaultdict(list)
        self.leavers: dict[str, list[Callable]] = defaultdict(list)
        for rule in rules:
            for name in dir(type(rule)):
                if name.startswith("visit_"):
                    self.visitors[name[len("visit_") :]].append(getattr(rule, name))
                elif name.startswith("leave_"):
                    self.leavers[name[len("leave_") :]].append(getattr(rule, name))
        self.parents = rules[0].context.parents if rules else {}
        self.stack: list[cst.CSTNode] = rules[0].context.walking if rules else []

    def on_visit(self, node: cst.CSTNode) -> bool:
        stack = self.stack
        if stack:
            self.parents[node] = stack[-1]
        stack.append(node)
        if type(node) is cst.Call:  # every rule's visit_Call asks what it calls: known now, worked out once
            self.parents[node.func] = node
        for visit in self.visitors.get(type(node).__name__, ()):
            visit(node)
        return True

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass  # (LibCST looks up a visit_<Node>_<attribute> method here, for every field of every node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for leave in self.leavers.get(type(original_node).__name__, ()):
            leave(original_node)
        self.stack.pop()


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


class ApplyFixes(cst.CSTTransformer):
    """Apply the rules' fixes bottom-up; never leave a block empty.

    Only the nodes on the way to a fix are entered (`parents` gives the way): the rest of the
    tree is kept as it is, unvisited."""

    def __init__(self, fixes: dict[cst.CSTNode, list[Fix]], parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.fixes = fixes
        self.on_the_way: set[cst.CSTNode] = set()
        for node in fixes:
            while node is not None and node not in self.on_the_way:
                self.on_the_way.add(node)
                node = parents.get(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.on_the_way and super().on_visit(node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        result = updated_node
        for fix in self.fixes.get(original_node, ()):
            result = fix(result)
            if not isinstance(result, cst.CSTNode):
                return result
        return super().on_leave(original_node, result)

    def leave_If(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`if torch.cuda.is_available(): <only no-ops>` (or any test without side effects, such as
        `if x.is_cuda:`) is dropped whole once its body is gone."""
        emptied = _only_pass(updated_node.body) and not _only_pass(original_node.body)
        if not (emptied and has_no_effect(updated_node.test)):
            return updated_node
        if updated_node.orelse is None:
            return remove_statement(updated_node)
        if isinstance(updated_node.orelse, cst.Else):  # `if c: pass else: b` is `if not c: b`
            return updated_node.with_changes(test=_negated(updated_node.test), body=updated_node.orelse.body, orelse=None)
        return updated_node

    def leave_IfExp(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`'cpu' if c else 'cpu'`, made by rewriting one branch into the other, is `'cpu'`."""
        if not isinstance(updated_node, cst.IfExp) or _same_value(original_node.body, original_node.orelse):
            return updated_node
        if not _same_value(updated_node.body, updated_node.orelse):
            return updated_node
        kept = updated_node.body
        atom = isinstance(kept, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.BaseNumber))
        if updated_node.lpar and not kept.lpar and not atom:  # (an atom needs no parentheses anywhere)
            kept = kept.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return kept

    def leave_BooleanOperation(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`c and True`, where a query became its constant answer, is `c` (and `c or False` too)."""
        if not isinstance(updated_node, cst.BooleanOperation):
            return updated_node
        neutral = "True" if isinstance(updated_node.operator, cst.And) else "False"
        for constant, kept, before in (
            (updated_node.right, updated_node.left, original_node.right),
            (updated_node.left, updated_node.right, original_node.left),
        ):
            if _is_name(constant, neutral) and not _is_name(before, neutral):
                if updated_node.lpar and not kept.lpar:
                    kept = kept.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
                return kept
        return updated_node

    def leave_BinaryOperation(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """`0 / 2**20`, where a memory query became its answer, is `0.0` (the script's own
        arithmetic on constants stays as written)."""
        if not isinstance(updated_node, cst.BinaryOperation) or number_value(original_node) is not None:
            return updated_node
        return folded_number(updated_node) or updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):  # noqa: N802 (libcst API)
        """A statement the fixes left with nothing to do goes: `None` (a call that became its
        answer), `model = model` (a conversion that became its argument)."""
        if type(updated_node) is not cst.SimpleStatementLine:  # (a fix made it something else)
            return updated_node
        emptied = left_doing_nothing(original_node, updated_node)
        if not emptied:
            return updated_node
        body = [statement for statement in updated_node.body if not any(statement is e for e in emptied)]
        if not body:
            return remove_statement(updated_node)
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=body)

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802 (libcst API)
        body, footer = _without_removed(updated_node.body, updated_node.footer)
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=footer[: len(footer) - len(updated_node.footer)])]
            footer = updated_node.footer
        return updated_node.with_changes(body=body, footer=footer)

    def leave_Module(self, original_node, updated_node):  # noqa: N802 (libcst API)
        body, footer = _without_removed(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer)


_EMPTY_MODULE = cst.Module([])


class _RemovedStatement(cst.SimpleStatementLine):
    """Where a fix removed a statement that had comments above it: ApplyFixes drops it from its
    block and gives the comments to the statement that follows (or to the block's end)."""


def only_when(guard: str, value: cst.BaseExpression, otherwise: cst.BaseExpression) -> cst.IfExp:
    """`(value if guard else otherwise)`."""
    return cst.IfExp(test=parse_expression(guard), body=value, orelse=otherwise,
                     lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def and_also(value: cst.BaseExpression, condition: str) -> cst.BaseExpression:
    """`value and condition` (`True` becomes `condition`), parenthesised where `value` needs it."""
    if isinstance(value, cst.Name) and value.value == "True":
        return parse_expression(condition)
    if not value.lpar and not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=value, operator=cst.And(), right=parse_expression(condition))


def keyword_argument(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spaced as PEP 8 spaces keywords."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def run_only_when(guard: str):
    """The fix that runs a statement line only when `guard` holds (`if guard:` around it), the
    comments above it staying above the `if`."""

    def guarded(updated: cst.SimpleStatementLine) -> cst.If:
        inner = updated.with_changes(leading_lines=[])
        return cst.If(test=parse_expression(guard), body=cst.IndentedBlock([inner]), leading_lines=updated.leading_lines)

    return guarded


def remove_statement(line: cst.BaseStatement) -> cst.BaseStatement | cst.RemovalSentinel:
    """The fix that removes a statement line, keeping the comment lines above it."""
    if not any(empty.comment for empty in line.leading_lines):
        return cst.RemoveFromParent()
    return _RemovedStatement(body=[cst.Pass()], leading_lines=line.leading_lines)


def _without_removed(body, footer) -> tuple[list, list]:
    """(`body` without the removed statements, `footer`), their comments moved down."""
    kept, carried = [], []
    for line in body:
        if isinstance(line, _RemovedStatement):
            carried.extend(line.leading_lines)
            continue
        if carried:
            line = line.with_changes(leading_lines=[*carried, *line.leading_lines])
            carried = []
        kept.append(line)
    return kept, [*carried, *footer]


def source_of(node: cst.CSTNode) -> str:
    """The source text of one node, as LibCST would print it."""
    return _EMPTY_MODULE.code_for_node(node)


def dotted_name(node: cst.CSTNode) -> str | None:
    """`a.b.c` for a chain of names (None for anything else): what `source_of` gives for one,
    without printing it (which costs as much as printing a statement)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """`not test`, or what `test` negates (`not c` gives `c`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    if isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not test.lpar:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=test)


def has_no_effect(test: cst.BaseExpression) -> bool:
    """Whether evaluating `test` can do nothing but give a value: names, attributes, constants,
    comparisons and boolean operations of those, and the `is_available()` probes."""
    if isinstance(test, cst.Call):
        return not test.args and source_of(test.func).endswith("is_available")
    if isinstance(test, (cst.Name, cst.Integer, cst.SimpleString)):
        return True
    if isinstance(test, cst.Attribute):
        return has_no_effect(test.value)
    if isinstance(test, cst.UnaryOperation):
        return has_no_effect(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return has_no_effect(test.left) and has_no_effect(test.right)
    if isinstance(test, cst.Comparison):
        return has_no_effect(test.left) and all(has_no_effect(c.comparator) for c in test.comparisons)
    return False


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _same_value(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two expressions are the same text, string literals with the same value, or
    number literals with the same value (`0.0` and `0`)."""
    if isinstance(a, cst.SimpleString) and isinstance(b, cst.SimpleString):
        return a.prefix == b.prefix and a.evaluated_value == b.evaluated_value
    if isinstance(a, (cst.Integer, cst.Float)) and isinstance(b, (cst.Integer, cst.Float)):
        return a.evaluated_value == b.evaluated_value
    return a.deep_equals(b)


def _only_pass(block: cst.BaseSuite) -> bool:
    body = block.body
    if isinstance(block, cst.SimpleStatementSuite):
        return all(isinstance(s, cst.Pass) for s in body)
    return all(isinstance(line, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in line.body) for line in body)


def parse_expression(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


def call_argument(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument bound to `keyword` (or passed at `position`) in `call`, if any."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
        if position is not None and arg.keyword is None and not arg.star and index == position:
            return arg
    return None


def with_arguments(call: cst.Call, before: list[cst.Arg] = (), after: list[cst.Arg] = ()) -> cst.Call:
    """`call` with arguments added in front of and behind its own. The call's own commas (and the
    line breaks they carry) stay; a comma is added only where an argument now needs one."""
    args = [*before, *call.args, *after]
    separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return call.with_changes(
        args=[
            arg.with_changes(comma=separator) if i < len(args) - 1 and not isinstance(arg.comma, cst.Comma) else arg
            for i, arg in enumerate(args)
        ]
    )


def without_arguments(call: cst.Call, keywords: set[str]) -> cst.Call:
    """`call` with the given keyword arguments removed (and a trailing comma tidied)."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value not in keywords]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
