"""What the rules of one file share: the target, the findings and fixes recorded, what the
rewritten code needs imported, and the walk's knowledge of each node's parent.

The lines of a finding are computed once, after the walk, for the nodes that have findings only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, ScopeProvider

from torchport.findings import Finding
from torchport.layout import Layout
from torchport.migrate.lines import node_lines
from torchport.import_table import ImportTable
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
    # each fix's rule and the generated source it needs, (code, needs): a suppression comment may take it out
    fix_origins: dict[cst.CSTNode, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
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
    keep_apex: bool = False  # apex code stays as written (migrate --apex keep)
    whole_source: bytes = b""  # the whole file, as read (the rules may walk a reduced one: see elide.py)
    qualified_names: dict[cst.CSTNode, str | None] = field(default_factory=dict)  # Rule.qualified_name's answers
    statement_lines: Sequence[int] | None = None  # where the module's top-level statements start (lines.py)
    layout: Layout | None = None  # the module's layout, where the caller holds one: lines are read there
    once: set[str] = field(default_factory=set)  # what was reported once for the file (its pieces share it)
    # the whole file's top-level import lines, where the rules walk it in pieces (pieces.py)
    file_imports: Sequence[cst.SimpleStatementLine] | None = None

    def add_fix(self, node: cst.CSTNode, fix: Fix, code: str, needs: str = "") -> None:
        """Record `fix` of `node`, made by the rule `code`; `needs`: the generated source."""
        self.fixes[node].append(fix)
        self.fix_origins[node].append((code, needs))
        if needs:
            self.need_expression(needs)

    def needs_again(self) -> None:
        """What the rewritten code needs, worked out again from the fixes left (some were taken out)."""
        self.needed_imports.clear()
        self.needed_definitions.clear()
        for node, origins in self.fix_origins.items():
            for _, needs in origins if node in self.fixes else ():
                if needs:
                    self.need_expression(needs)

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

    def lines_of(self, nodes: set[cst.CSTNode]) -> dict[cst.CSTNode, tuple[int, int]]:
        """(first line, last line) of each of `nodes` (of the module) found there."""
        if self.layout is None:
            return node_lines(self.module, nodes, self.statement_lines, self.parents)
        lines = self.layout.lines
        return {node: lines[node] for node in nodes if node in lines}

    def findings(self) -> list[Finding]:
        """The rows reported so far, with their lines."""
        lines = self.lines_of({node for node, *_ in self.reported})
        rows = [
            Finding(self.path, *lines.get(node, (0, 0)), code, operation, message, *extra)
            for node, code, operation, message, *extra in self.reported
        ]
        return sorted(dict.fromkeys(rows), key=lambda f: (f.start_line, f.code))  # (two alike on one line: one row)
