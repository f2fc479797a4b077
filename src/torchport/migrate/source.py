"""Migrate one file's source: set aside what never mentions CUDA, parse the rest once, run every
rule in one pass, apply the fixes, tidy imports, put back what was set aside."""

from __future__ import annotations

import ast
import re
from array import array
import warnings
from functools import lru_cache
from dataclasses import dataclass, field, replace

import libcst as cst

from torchport.migrate import imports
from torchport.migrate.device_holders import device_names
from torchport.migrate.device_indices import INDEX_SOURCES, index_names, mentions_of
from torchport.migrate.elide import Elision, elide
from torchport.migrate.mentions import Mentions
from torchport.findings import Finding, Operation
from torchport.migrate.names import AST_PARSE_ERRORS, ImportTable
from torchport.migrate.rules import RULES
from torchport.migrate.rules.base import (
    ApplyFixes, FileContext, NameAnalysisError, Rule, RulesPass, TokenRule, source_of,
)
from torchport import targets
from torchport.syntax import syntax_problem
from torchport.targets import Target

# A file that never spells what some rule reacts to has nothing to migrate: it is not even parsed.
MENTIONS_CUDA = Mentions(rule.mentions for rule in RULES)  # (on any target)


@lru_cache(maxsize=None)
def rules_for(target_name: str) -> tuple[type[Rule], ...]:
    """The rules that can have anything to say on a target, in the registry's order."""
    target = targets.get(target_name)
    return tuple(rule for rule in RULES if rule.applies_to(target))


@lru_cache(maxsize=None)
def walking_rules(target_name: str) -> tuple[type[Rule], ...]:
    """The rules of a target that join the walk of the parsed file."""
    return tuple(rule for rule in rules_for(target_name) if not issubclass(rule, TokenRule))


@lru_cache(maxsize=None)
def token_rules(target_name: str) -> tuple[tuple[type[TokenRule], re.Pattern[bytes]], ...]:
    """The rules of a target that rewrite tokens before the parse, each with what it reacts to."""
    return tuple((rule, re.compile(rule.mentions)) for rule in rules_for(target_name) if issubclass(rule, TokenRule))


@lru_cache(maxsize=None)
def mentions(target_name: str) -> Mentions:
    """What a file must contain for one of a target's rules to have anything to do."""
    return Mentions(rule.mentions for rule in rules_for(target_name))
# In a file with a device-index source, the index may be set in one definition and used in
# another: the names that hold one are found first, and what mentions them is kept whole.
MENTIONS_INDEX_SOURCE = re.compile(INDEX_SOURCES)
# Where `x.cuda(d)` or `torch.cuda.device(d)` has a `d`, a target with a device function needs to
# know which names hold a device.
MENTIONS_DEVICE_ARGUMENT = re.compile(rb"\bcuda(?:\.device)?\(\s*[^)\s]")
IMPORT_CODE = "TP000"


@dataclass
class FileResult:
    source: bytes  # the migrated source (the input itself when nothing changed)
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why the file could not be migrated (it is then copied unchanged)

    @property
    def changed(self) -> bool:
        return any(f.operation.is_change for f in self.findings)


@dataclass(frozen=True)
class Reading:
    """What `ast` tells of the whole file before LibCST sees it (or the part of it that matters)."""

    whole: bytes  # the file as read
    indices: frozenset[str] = frozenset()  # names that hold a device index (device_indices.py)
    devices: frozenset[str] = frozenset()  # names that hold a device (device_holders.py)
    imports: ImportTable | None = None  # of what LibCST sees; None: left to LibCST's scope analysis
    elision: Elision | None = None  # what LibCST need not see (elide.py)
    statement_lines: array | None = None  # where each top-level statement LibCST sees starts (lines.py)


def migrate_source(source: bytes, target: Target, path: str = "<string>", apply_affinity: bool = False) -> FileResult:
    """Migrate Python `source` (bytes, any declared encoding) to `target`; `apply_affinity`: also
    make the affinity swaps that keep behaviour (see rules/affinity.py)."""
    if not mentions(target.name).search(source):
        return FileResult(source)
    rewritten, early = _rewrite_tokens(source, target, path)
    result = _migrate_parsed(rewritten, target, path, apply_affinity)
    if not early:
        return result
    if result.error is not None:
        return FileResult(source, error=result.error)
    return FileResult(result.source, sorted(early + result.findings, key=lambda f: (f.start_line, f.code)))


def _rewrite_tokens(source: bytes, target: Target, path: str) -> tuple[bytes, list[Finding]]:
    """`source` after the token rules that it mentions, and their rows."""
    rows: list[Finding] = []
    for rule, mentioned in token_rules(target.name):
        if mentioned.search(source):
            source, found = rule.rewrite(source, path)
            rows += found
    return source, rows


def _migrate_parsed(source: bytes, target: Target, path: str, apply_affinity: bool) -> FileResult:
    """Migrate `source`, which the token rules have seen, with LibCST (the parts that matter)."""
    reading = _read(source, mentions(target.name), target.device_function is not None)
    elision = reading.elision
    if elision is not None:
        result = _migrate(elision.reduced, target, path, reading, apply_affinity)
        restored = elision.restore(result.source) if result.changed else source
        if result.error is None and restored is not None:
            return FileResult(restored, [_at_original_lines(f, elision) for f in result.findings])
        reading = replace(reading, imports=ImportTable.of(source), statement_lines=None)  # (the whole file after all)
    return _migrate(source, target, path, reading, apply_affinity)


def _read(source: bytes, mentioned: Mentions, device_kinds: bool = False) -> Reading:
    """One `ast` parse of the whole file, dropped before LibCST's (much larger) tree is built;
    `device_kinds`: also find the names that hold a device."""
    tree = _ast_of(source)
    if tree is None:
        return Reading(source)
    indices = index_names(tree) if MENTIONS_INDEX_SOURCE.search(source) else frozenset()
    devices = device_names(tree) if device_kinds and MENTIONS_DEVICE_ARGUMENT.search(source) else frozenset()
    kept = mentioned.extended(mentions_of(indices)) if indices else mentioned
    elision = elide(source, kept, tree)
    if elision is None:
        seen, statement_lines = tree, array("l", (s.lineno for s in tree.body))
    else:  # (the import table of what LibCST will see)
        seen, statement_lines = elision.seen(tree)
    return Reading(source, indices, devices, ImportTable.of_tree(seen), elision, statement_lines)


def _ast_of(source: bytes) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except AST_PARSE_ERRORS:
        return None


def _at_original_lines(finding: Finding, elision: Elision) -> Finding:
    start, end = elision.original_lines(finding.start_line, finding.end_line)
    return replace(finding, start_line=start, end_line=end)


def _migrate(source: bytes, target: Target, path: str, reading: Reading, apply_affinity: bool = False) -> FileResult:
    """Migrate all of `source` (the whole file, or its reduced form) with LibCST."""
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError) as error:
        problem = syntax_problem(source, path)  # (Python's reason and line, not LibCST's grammar error)
        return FileResult(source, error=str(problem) if problem else _one_line(error))
    context = FileContext(
        target=target, path=path, module=module, imports=reading.imports, device_index_names=reading.indices,
        device_names=reading.devices,
        apply_affinity=apply_affinity, whole_source=reading.whole, statement_lines=reading.statement_lines,
    )
    try:
        module.visit(RulesPass([rule(context) for rule in walking_rules(target.name)]))
    except NameAnalysisError as error:
        return FileResult(source, error=f"could not analyse names: {_one_line(error.__cause__)}")
    findings = context.findings()
    if not context.fixes:
        return FileResult(source, findings)
    new_module = module.visit(ApplyFixes(context.fixes, context.parents))
    if target.guard:
        new_module = new_module.visit(MergeAdjacentGuards(target.guard))
    new_module, import_rows = _tidy_imports(module, new_module, context)
    code = new_module.code  # printed once: checked, then written, and read for the import rows' lines
    printed = {False: code.splitlines(), True: source.decode(module.encoding, "replace").splitlines()}
    import_findings = [
        _import_finding(context, operation, message, _line_of(printed[in_original], matches))
        for operation, message, matches, in_original in import_rows
    ]
    findings = sorted(findings + import_findings, key=lambda f: (f.start_line, f.code))
    try:
        with warnings.catch_warnings():  # (the check is for errors: the script's own warnings are not ours to print)
            warnings.simplefilter("ignore")
            compile(code, path, "exec", dont_inherit=True)
    except SyntaxError as error:  # a rule produced code this Python cannot run (or the input could not run either)
        return FileResult(source, findings=[], error=_compile_error(source, path) or f"rewrite would not compile ({error.msg})")
    return FileResult(code.encode(new_module.encoding), findings)


class MergeAdjacentGuards(cst.CSTTransformer):
    """`if guard: a` followed by `if guard: b` becomes one `if guard:` block, as a person writes it."""

    def __init__(self, guard: str) -> None:
        super().__init__()
        self.guard = guard

    def _merge(self, body):
        merged = []
        for statement in body:
            previous = merged[-1] if merged else None
            if (
                isinstance(statement, cst.If)
                and isinstance(previous, cst.If)
                and statement.orelse is None
                and previous.orelse is None
                and not statement.leading_lines
                and source_of(statement.test) == self.guard
                and source_of(previous.test) == self.guard
            ):
                inner = list(previous.body.body)
                for line in statement.body.body:  # a repeated bare call (two syncs in a row) once
                    if not (inner and inner[-1].deep_equals(line)):
                        inner.append(line)
                block = previous.body.with_changes(body=inner)
                merged[-1] = previous.with_changes(body=block)
            else:
                merged.append(statement)
        return merged

    def _is_guard(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.If) and node.orelse is None and source_of(node.test) == self.guard

    def leave_If(self, original_node, updated_node):  # noqa: N802
        """Inside `if guard:`, a nested `if guard:` is redundant: keep its body only."""
        if not self._is_guard(updated_node):
            return updated_node
        body = []
        for statement in updated_node.body.body:
            body.extend(statement.body.body if self._is_guard(statement) else [statement])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802
        return updated_node.with_changes(body=self._merge(updated_node.body))

    def leave_Module(self, original_node, updated_node):  # noqa: N802
        return updated_node.with_changes(body=self._merge(updated_node.body))


def _compile_error(source: bytes, path: str) -> str | None:
    """Why Python itself rejects `source`, which LibCST accepted (e.g. more than 200 nested brackets)."""
    problem = syntax_problem(source, path)
    return str(problem) if problem else None


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return f"{type(error).__name__}: {first}"


def _tidy_imports(original: cst.Module, module: cst.Module, context: FileContext) -> tuple[cst.Module, list[tuple]]:
    """The module with its imports and definitions in order, and a row for each kind of change:
    (operation, message, what its line says, whether that line is in the original)."""
    rows: list[tuple] = []
    cuda_imports = list(imports.cuda_imports(original))
    if cuda_imports:
        module, removed = imports.remove_unused(module, cuda_imports)
        if removed:
            matches = lambda text: text.startswith(("import torch.cuda", "from torch.cuda", "from torch import"))  # noqa: E731
            rows.append((Operation.DELETE, "remove torch.cuda imports no longer used", matches, True))
    target = context.target
    wanted = sorted(name for name in context.needed_imports if not imports.binds(module, name))
    if wanted:
        module = imports.add(module, wanted)
        first = f"import {wanted[0]}"
        rows.append((Operation.INSERT, f"import what the new code uses: {', '.join(wanted)}", first.__eq__, False))
    if target.setup_import and not imports.has_import(module, target.setup_import):
        module = imports.insert_after_torch_import(module, target.setup_import)
        rows.append((Operation.INSERT, f"insert import {target.setup_import}", f"import {target.setup_import}".__eq__, False))
    needed = [name for name in target.definitions if name in context.needed_definitions]
    for name in reversed(needed):  # (each goes right after the imports: they end up in the target's order)
        statement = target.definitions[name]
        if not imports.has_statement(module, statement):
            module = imports.insert_after_imports(module, statement)
            first = statement.partition("\n")[0].removesuffix(":")
            rows.append((Operation.INSERT, f"insert {first}", lambda text, first=first: text.startswith(first), False))
    return module, rows


def _import_finding(context: FileContext, operation: Operation, message: str, line: int) -> Finding:
    return Finding(context.path, line, line, IMPORT_CODE, operation, message)


def _line_of(lines: list[str], matches) -> int:
    """The number of the first of `lines` whose text `matches` (else 1)."""
    for number, text in enumerate(lines, start=1):
        if matches(text):
            return number
    return 1
