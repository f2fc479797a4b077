"""Migrate one file's source: set aside what never mentions CUDA, parse the rest once (a large
file: a piece at a time, see pieces.py), run every rule in one pass, apply the fixes, tidy
imports, put back what was set aside."""

from __future__ import annotations

import ast
import re
from array import array
import warnings
from functools import lru_cache
from typing import TYPE_CHECKING
from dataclasses import dataclass, field, replace

import libcst as cst

from torchport.migrate import imports, pieces
from torchport.migrate.device_holders import DeviceNames
from torchport.migrate.device_indices import INDEX_SOURCES, IndexNames, mentions_of
from torchport.migrate.elide import Elision, definitions, elide_definitions, names_near_cuda, top_level_lines
from torchport.migrate.mentions import Mentions
from torchport.distribute.lines import back, line_map
from torchport.errors import INTERNAL_ERROR
from torchport.findings import Finding, Operation
from torchport.import_table import ImportTable
from torchport.layout import Layout
from torchport.migrate.rules import RULES
from torchport.migrate.rules.base.context import FileContext, NameAnalysisError
from torchport.migrate.rules.base.fixes import ApplyFixes
from torchport.migrate.rules.base.nodes import source_of
from torchport.migrate.rules.base.rule import Rule, TokenRule, TreeRule
from torchport.migrate.rules.base.rules_pass import RulesPass
from torchport.migrate.rules.setup_import import missing_setup_import
from torchport.migrate.codes import IMPORT_CODE
from torchport.migrate.selection import ALL, RuleSelection
from torchport.migrate import suppression
from torchport import targets
from torchport.pyast import AST_PARSE_ERRORS, parse_quietly
from torchport.syntax import syntax_problem
from torchport.targets import Target

if TYPE_CHECKING:
    from torchport.distribute.driver import Distribution

# A file that never spells what some rule reacts to has nothing to migrate: it is not even parsed.
MENTIONS_CUDA = Mentions(rule.mentions for rule in RULES if not issubclass(rule, TreeRule))  # (on any target)


@lru_cache(maxsize=None)
def rules_for(target_name: str, chosen: RuleSelection = ALL) -> tuple[type[Rule], ...]:
    """The rules that can have anything to say on a target, in the registry's order (those
    `chosen` by --select / --ignore)."""
    target = targets.get(target_name)
    return tuple(rule for rule in RULES if rule.applies_to(target) and chosen.allows(rule.code))


@lru_cache(maxsize=None)
def walking_rules(target_name: str, chosen: RuleSelection = ALL) -> tuple[type[Rule], ...]:
    """The rules of a target that join the walk of the parsed file."""
    return tuple(rule for rule in rules_for(target_name, chosen) if not issubclass(rule, (TokenRule, TreeRule)))


@lru_cache(maxsize=None)
def token_rules(target_name: str, chosen: RuleSelection = ALL) -> tuple[tuple[type[TokenRule], re.Pattern[bytes]], ...]:
    """The rules of a target that rewrite tokens before the parse, each with what it reacts to."""
    return tuple((rule, re.compile(rule.mentions)) for rule in rules_for(target_name, chosen) if issubclass(rule, TokenRule))


@lru_cache(maxsize=None)
def tree_rules(target_name: str, chosen: RuleSelection = ALL) -> tuple[tuple[type[TreeRule], re.Pattern[bytes]], ...]:
    """The rules of a target that read the file's `ast` apart from the pass, each with its pre-filter."""
    return tuple((rule, re.compile(rule.mentions)) for rule in rules_for(target_name, chosen) if issubclass(rule, TreeRule))


@lru_cache(maxsize=None)
def follows(target_name: str, chosen: RuleSelection = ALL) -> re.Pattern[bytes] | None:
    """What a top-level statement says when a rule of the target follows the names it binds."""
    said = [rule.follows for rule in walking_rules(target_name, chosen) if rule.follows]
    return re.compile(b"|".join(said)) if said else None


@lru_cache(maxsize=None)
def mentions(target_name: str, chosen: RuleSelection = ALL) -> Mentions:
    """What a file must contain for one of a target's rules to have anything to do in the pass."""
    return Mentions(rule.mentions for rule in rules_for(target_name, chosen) if not issubclass(rule, TreeRule))
# In a file with a device-index source, the index may be set in one definition and used in
# another: the names that hold one are found first, and what mentions them is kept whole.
MENTIONS_INDEX_SOURCE = re.compile(INDEX_SOURCES)
# Where `x.cuda(d)` or `torch.cuda.device(d)` has a `d`, a target with a device function needs to
# know which names hold a device.
MENTIONS_DEVICE_ARGUMENT = re.compile(rb"\bcuda(?:\.device)?\(\s*[^)\s]")
@dataclass
class FileResult:
    source: bytes  # the migrated source (the input itself when nothing changed)
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why the file could not be migrated (it is then copied unchanged)
    distribution: Distribution | None = None  # what --distributed made of it (None: not asked)
    apex: str = ""  # what --apex made of its apex: "native", "compat" (the stand-in), "kept"; "": no apex
    suppressed: list[Finding] = field(default_factory=list)  # rows a suppression comment took out (suppression.py)

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
    top_level: pieces.TopLevel | None = None  # what LibCST sees, where it sees it in pieces (pieces.py)
    readable: bool = True  # whether `ast` could read the file


def migrate_source(
    source: bytes, target: Target, path: str = "<string>", apply_affinity: bool = False, keep_apex: bool | None = None,
    chosen: RuleSelection = ALL, laid_out: Layout | None = None,
) -> FileResult:
    """Migrate Python `source` (bytes, any declared encoding) to `target`; `apply_affinity`: also
    make the affinity swaps that keep behaviour (see rules/affinity.py); `keep_apex`: whether apex
    code stays as written (`migrate --apex keep`; None: where the target keeps it); `chosen`: the
    rules that run (--select / --ignore); `laid_out`: the layout of LibCST's tree of `source` where
    the caller holds one (each node held once, as --distributed's steps leave it): the tree is read
    rather than parsed again, walked in the layout's order and its lines read there."""
    kept = target.keeps_apex if keep_apex is None else keep_apex
    if target.runs_cuda_code or not mentions(target.name, chosen).search(source):  # (CUDA on CUDA: nothing to move)
        return tree_result(source, target, path, chosen)
    rewritten, early = _rewrite_tokens(source, target, path, chosen)
    laid_out = laid_out if rewritten == source else None  # (a token rule's rewrite is another text)
    result = _migrate_parsed(rewritten, target, path, apply_affinity, kept, chosen, laid_out)
    if result.error is not None:
        return FileResult(source, error=result.error) if early else result
    tree = tree_result(rewritten, target, path, chosen)
    early += tree.findings
    if not early and not tree.suppressed:
        return result
    findings = sorted(early + result.findings, key=lambda f: (f.start_line, f.code))
    return replace(result, findings=findings, suppressed=result.suppressed + tree.suppressed)


def tree_rows(source: bytes, target: Target, path: str, chosen: RuleSelection = ALL) -> list[Finding]:
    """The rows of the rules that read the file's `ast` apart from the pass (rows only)."""
    rows: list[Finding] = []
    for rule, mentioned in tree_rules(target.name, chosen):
        if mentioned.search(source):
            rows += rule.rows(source, target, path)
    return rows


def tree_result(source: bytes, target: Target, path: str, chosen: RuleSelection = ALL) -> FileResult:
    """`source` as it is, with its tree rules' rows; those a suppression comment covers set apart."""
    rows = tree_rows(source, target, path, chosen)
    if not rows or not suppression.MENTIONS.search(source):
        return FileResult(source, rows)
    found = suppression.of_text(source.decode(_encoding(source), "replace"))
    if found is None:
        return FileResult(source, rows)
    kept = [row for row in rows if not found.covers(row.code, row.start_line)]
    return FileResult(source, kept, suppressed=[row for row in rows if found.covers(row.code, row.start_line)])


def _encoding(source: bytes) -> str:
    try:
        return pieces.encoding_of(source)
    except (SyntaxError, LookupError):
        return "utf-8"


def _rewrite_tokens(source: bytes, target: Target, path: str, chosen: RuleSelection) -> tuple[bytes, list[Finding]]:
    """`source` after the token rules that it mentions, and their rows."""
    rows: list[Finding] = []
    for rule, mentioned in token_rules(target.name, chosen):
        if mentioned.search(source):
            source, found = rule.rewrite(source, path)
            rows += found
    return source, rows


def _migrate_parsed(
    source: bytes, target: Target, path: str, apply_affinity: bool, keep_apex: bool, chosen: RuleSelection = ALL,
    laid_out: Layout | None = None,
) -> FileResult:
    """Migrate `source`, which the token rules have seen, with LibCST (the parts that matter, or
    all of `laid_out`'s tree, the caller's tree of it: nothing to parse, so nothing to set aside)."""
    read = lambda set_aside=True: _read(  # noqa: E731
        source, mentions(target.name, chosen), target.device_function is not None, set_aside, follows(target.name, chosen))
    reading = read()
    if laid_out is not None and len(source) <= pieces.MIGRATE_WHOLE_BYTES:  # (a larger input is migrated in pieces)
        elision = reading.elision
        aside = elision.definitions_in(laid_out.module) if elision is not None else set()
        if aside is not None:  # (the rules pass by what the reduced source would set aside)
            return _migrate(source, target, path, reading, apply_affinity, keep_apex, chosen, laid_out, aside)
    if not reading.readable and len(source) > pieces.READ_WHOLE_BYTES:  # (LibCST's parse would cost gigabytes)
        return FileResult(source, error=_compile_error(source, path) or "could not be read")
    elision = reading.elision
    if elision is not None:
        result = _migrate(elision.reduced, target, path, reading, apply_affinity, keep_apex, chosen)
        restored = elision.restore(result.source) if result.changed else source
        if result.error is None and restored is not None:
            return FileResult(restored, [_at_original_lines(f, elision) for f in result.findings],
                              suppressed=[_at_original_lines(f, elision) for f in result.suppressed])
        reading = read(set_aside=False)  # (the whole file after all)
    return _migrate(source, target, path, reading, apply_affinity, keep_apex, chosen)


class _OneTree:
    """The `ast` tree of a file read whole (`trees()` like pieces.AstPieces')."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree

    def trees(self):
        yield self.tree


def _read(
    source: bytes, mentioned: Mentions, device_kinds: bool = False, set_aside: bool = True,
    followed: re.Pattern[bytes] | None = None,
) -> Reading:
    """What `ast` tells of the file, read whole (one parse, dropped before LibCST's much larger
    tree is built) or, for a large file, a piece at a time; `device_kinds`: also find the names
    that hold a device; `set_aside`: set aside the definitions that need no migration;
    `followed`: what a statement says whose names a rule follows (pieces.py)."""
    if len(source) <= pieces.READ_WHOLE_BYTES:
        tree = parse_quietly(source)
        if tree is None:
            return Reading(source, readable=False)
        parts = _OneTree(tree)
    else:
        lines = source.splitlines(keepends=True)
        try:
            parts = pieces.AstPieces(lines, pieces.encoding_of(source), pieces.READ_PIECE_BYTES)
        except (SyntaxError, LookupError):  # (a bad coding cookie)
            return Reading(source, readable=False)
    try:
        return _read_parts(source, parts, mentioned, device_kinds, set_aside, followed)
    except AST_PARSE_ERRORS:
        return Reading(source, readable=False)


def _read_parts(source: bytes, parts, mentioned: Mentions, device_kinds: bool, set_aside: bool, followed) -> Reading:
    lines = source.splitlines(keepends=True)
    indices = IndexNames() if MENTIONS_INDEX_SOURCE.search(source) else None
    devices = DeviceNames() if device_kinds and MENTIONS_DEVICE_ARGUMENT.search(source) else None
    found, near = [], set()
    for tree in parts.trees():
        if indices is not None:
            indices.add(tree)
        if devices is not None:
            devices.add(tree)
        if set_aside:
            found += definitions(tree, lines)
            near |= names_near_cuda(tree, lines, mentioned)
    index_names = indices.names() if indices is not None else frozenset()
    kept = mentioned.extended(mentions_of(index_names)) if index_names else mentioned
    elision = None
    if found:
        if index_names:  # (what is near CUDA then includes what mentions those names)
            near = set().union(*(names_near_cuda(tree, lines, kept) for tree in parts.trees()))
        elision = elide_definitions(source, lines, found, near, kept)
    seen = elision.reduced if elision is not None else source
    top = pieces.TopLevel() if len(seen) > pieces.MIGRATE_WHOLE_BYTES else None
    followed = followed if top is not None and followed is not None and followed.search(seen) else None
    seen_lines = seen.splitlines(keepends=True) if followed is not None else []
    statement_lines = array("l")

    def seen_trees():
        """The trees LibCST's input would give (the import table's), the lines of their statements
        recorded on the way."""
        for tree in parts.trees():
            for node, start, first, last in top_level_lines(tree.body, elision):
                statement_lines.append(start)
                if top is not None:
                    top.add(node, start, first, last, followed, b"".join(seen_lines[first - 1 : last]))
            yield elision.seen(tree)[0] if elision is not None else tree

    table = ImportTable.of_trees(seen_trees())
    devices_held = devices.names() if devices is not None else frozenset()
    return Reading(source, index_names, devices_held, table, elision, statement_lines, top)


def _at_original_lines(finding: Finding, elision: Elision) -> Finding:
    start, end = elision.original_lines(finding.start_line, finding.end_line)
    return replace(finding, start_line=start, end_line=end)


def _migrate(
    source: bytes, target: Target, path: str, reading: Reading, apply_affinity: bool = False, keep_apex: bool = False,
    chosen: RuleSelection = ALL, laid_out: Layout | None = None, aside: set[cst.CSTNode] = frozenset(),
) -> FileResult:
    """Migrate all of `source` (the whole file, or its reduced form) with LibCST (`laid_out`: the
    layout of its tree, where the caller holds one; `aside`: definitions of it whose insides the
    rules pass by, as they would pass by a stand-in)."""
    if _in_pieces(source, reading):
        return _migrate_in_pieces(source, target, path, reading, apply_affinity, keep_apex, chosen)
    try:
        module = cst.parse_module(source) if laid_out is None else laid_out.module
    except (cst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError) as error:
        return FileResult(source, error=_compile_error(source, path) or _one_line(error))
    context = FileContext(
        target=target, path=path, module=module, imports=reading.imports, device_index_names=reading.indices,
        device_names=reading.devices,
        apply_affinity=apply_affinity, keep_apex=keep_apex, whole_source=reading.whole,
        statement_lines=reading.statement_lines, layout=laid_out,
    )
    walk = RulesPass([rule(context) for rule in walking_rules(target.name, chosen)], aside)
    try:
        walk.through(laid_out) if laid_out is not None else module.visit(walk)
    except NameAnalysisError as error:
        return FileResult(source, error=f"could not analyse names: {_one_line(error.__cause__)}")
    suppressed = _suppressed(context, source, module.encoding)
    findings = context.findings()
    if not context.fixes:
        return FileResult(source, findings, suppressed=suppressed)
    new_module = _fixed(module, context, target)
    new_module, import_rows = _tidy_imports(list(imports.cuda_imports(module)), new_module, context)
    code = new_module.code  # printed once: checked, then written, and read for the import rows' lines
    original = source.decode(module.encoding, "replace")
    result = _checked(source, path, code, new_module.encoding, findings, import_rows, context, original)
    return replace(result, suppressed=suppressed) if suppressed and result.error is None else result


def _suppressed(context: FileContext, source: bytes | str, encoding: str = "utf-8") -> list[Finding]:
    """The rows (and fixes) a suppression comment of `source` takes out of `context`."""
    if not suppression.MENTIONS.search(source if isinstance(source, bytes) else source.encode("utf-8", "replace")):
        return []
    text = source.decode(encoding, "replace") if isinstance(source, bytes) else source
    return suppression.drop_suppressed(context, suppression.of_text(text))


def _checked(
    source: bytes, path: str, code: str, encoding: str, findings: list[Finding], import_rows: list[tuple],
    context: FileContext, original: str, parts: list[str] | None = None,
) -> FileResult:
    """The migrated `code`, with the rows of the import tidying placed, once Python compiles it
    (or compiles each of `parts`, which make it: a large file's pieces, see pieces.py). Every row
    names a line of the file as read: an inserted line is found in `code`, then mapped back to the
    line of `original` it was put beside, as every other row is numbered."""
    printed = {False: code.splitlines(), True: original.splitlines()}
    inserted = line_map(original, code, align_replaced=True) if any(not in_original for *_, in_original in import_rows) else []
    import_findings = [
        _import_finding(context, operation, message,
                        _line_of(printed[True], matches) if in_original else back(inserted, _line_of(printed[False], matches)))
        for operation, message, matches, in_original in import_rows
    ]
    findings = sorted(findings + import_findings, key=lambda f: (f.start_line, f.code))
    try:
        with warnings.catch_warnings():  # (the check is for errors: the script's own warnings are not ours to print)
            warnings.simplefilter("ignore")
            for part in parts or [code]:
                compile(part, path, "exec", dont_inherit=True)
    except SyntaxError as error:  # a rule produced code this Python cannot run (or the input could not run either)
        return FileResult(source, findings=[], error=_compile_error(source, path) or f"rewrite would not compile ({error.msg})")
    return FileResult(code.encode(encoding), findings)


def _in_pieces(source: bytes, reading: Reading) -> bool:
    """Whether `source` (LibCST's input) is large enough to be migrated in pieces, and can be:
    every name a scope analysis would resolve is known file-wide (the import table says which
    functions shadow it), and no text of the file looks like a skeleton's stand-in."""
    top, table = reading.top_level, reading.imports
    if top is None or table is None or len(top.starts) < 2:
        return False
    return all(name in table.shadowed_in for name in table.ambiguous) and pieces.MARKER.encode() not in source


def _migrate_in_pieces(
    source: bytes, target: Target, path: str, reading: Reading, apply_affinity: bool, keep_apex: bool,
    chosen: RuleSelection = ALL,
) -> FileResult:
    """`_migrate`, a piece of top-level statements at a time (pieces.py): the same text and rows."""
    top = reading.top_level
    encoding = pieces.encoding_of(source)
    text = source.decode(encoding)
    newline = pieces.default_newline(text)
    unterminated = not text.endswith(("\n", "\r"))  # (LibCST drops the newline it would print there)
    lines = pieces.split_lines(text + newline if unterminated else text)
    indent = pieces.default_indent(lines, top)
    shared = FileContext(  # (what the pieces add up to)
        target=target, path=path, file_imports=_file_imports(lines, top), whole_source=reading.whole, keep_apex=keep_apex,
    )
    skeleton = pieces.Skeleton(newline, target.definitions, target.guard)
    findings, cuda_imports, codes, changed, suppressed = [], [], [], False, []
    for piece in pieces.plan(top, source, len(lines), pieces.MIGRATE_PIECE_BYTES):
        piece_text, offset, starts = piece.text_of(lines, top, newline, indent)
        done = _migrate_piece(piece_text, piece.parsed_behind, indent, starts, reading, shared, apply_affinity, chosen)
        if isinstance(done, str):
            return FileResult(source, error=done)
        module, context, dropped = done
        suppressed += [_shifted(finding, offset) for finding in dropped]
        findings += [_shifted(finding, offset) for finding in context.findings()]
        cuda_imports += imports.cuda_imports(module.with_changes(body=module.body[piece.parsed_behind :]))
        if context.fixes:
            changed = True
            module = _fixed(module, context, target)
        shared.needed_imports |= context.needed_imports  # (once fixed: a removed statement's needs are gone)
        shared.needed_definitions |= context.needed_definitions
        codes.append(skeleton.add(module, piece.parsed_behind))
        del module, context  # (before the next piece is parsed)
    if not changed:
        return FileResult(source, findings, suppressed=suppressed)
    whole = _indented_as(cst.parse_module(skeleton.text), indent)
    if target.guard:
        whole = whole.visit(MergeAdjacentGuards(target.guard))
    whole, import_rows = _tidy_imports(cuda_imports, whole, shared, _names_used(codes) if cuda_imports else None)
    code = skeleton.restore(whole.code)
    if code is None:
        return FileResult(source, error=f"{INTERNAL_ERROR} (a piece of the file was lost on the way)")
    if unterminated:
        code = code.removesuffix(newline)
    result = _checked(source, path, code, encoding, findings, import_rows, shared, text, skeleton.parts_to_compile(whole.code))
    return replace(result, suppressed=suppressed) if suppressed and result.error is None else result


def _migrate_piece(
    text: str, behind: int, indent: str, starts: array, reading: Reading, shared: FileContext, apply_affinity: bool,
    chosen: RuleSelection = ALL,
) -> tuple[cst.Module, FileContext, list[Finding]] | str:
    """One piece parsed and walked by the rules (nothing kept of the `behind` statements it is
    parsed behind), with the rows its suppression comments took out; or why it could not be."""
    target, path = shared.target, shared.path
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, SyntaxError) as error:
        return _compile_error(reading.whole, path) or _one_line(error)
    if not behind:  # (the file's first piece: its indentation is the file's, or it has no block of its own)
        module = module.with_changes(default_indent=indent)
    context = FileContext(
        target=target, path=path, module=module, imports=reading.imports, device_index_names=reading.indices,
        device_names=reading.devices, apply_affinity=apply_affinity, keep_apex=shared.keep_apex, whole_source=reading.whole,
        statement_lines=starts, once=shared.once, file_imports=shared.file_imports,
    )
    try:
        module.visit(RulesPass([rule(context) for rule in walking_rules(target.name, chosen)]))
    except NameAnalysisError as error:
        return f"could not analyse names: {_one_line(error.__cause__)}"
    _forget(context, module.body[:behind])
    dropped = _suppressed(context, text)
    return module, context, dropped


def _fixed(module: cst.Module, context: FileContext, target: Target) -> cst.Module:
    """`module` with the rules' fixes applied, and adjacent guards merged. What a fix inside a
    removed statement needed (`y.record_stream(torch.cuda.current_stream())` dropped whole on the
    CPU: its stream's HostStream) is needed no more."""
    applied = ApplyFixes(context.fixes, context.parents)
    module = module.visit(applied)
    if applied.removed:
        parents, removed = context.parents, set(applied.removed)
        for node in [node for node in context.fixes if _within(parents.get(node), removed, parents)]:
            del context.fixes[node]  # (the removing fix itself stays: what it needs, it wrote elsewhere)
        context.needs_again()
    return module.visit(MergeAdjacentGuards(target.guard)) if target.guard else module


def _within(node: cst.CSTNode | None, nodes: set[cst.CSTNode], parents: dict) -> bool:
    """Whether `node` is one of `nodes` or lies inside one."""
    while node is not None:
        if node in nodes:
            return True
        node = parents.get(node)
    return False


def _forget(context: FileContext, statements: list[cst.BaseStatement]) -> None:
    """Drop what the rules reported and would change in `statements`: those a piece was parsed
    behind (their own piece has them)."""
    if not statements:
        return
    parents, module, behind = context.parents, context.module, set(statements)

    def inside(node: cst.CSTNode) -> bool:
        while node in parents and parents[node] is not module:
            node = parents[node]
        return node in behind

    context.reported[:] = [row for row in context.reported if not inside(row[0])]
    for node in [node for node in context.fixes if inside(node)]:
        del context.fixes[node]


class _PinIndents(cst.CSTTransformer):
    """Each block's indentation written out, so that the module's default can change."""

    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802
        return updated_node if updated_node.indent is not None else updated_node.with_changes(indent=self.indent)


def _indented_as(module: cst.Module, indent: str) -> cst.Module:
    """`module` with `indent` as its default indentation (for the code still to be written into
    it), its own blocks as they were."""
    if module.default_indent != indent:
        module = module.visit(_PinIndents(module.default_indent)).with_changes(default_indent=indent)
    return module


def _names_used(codes: list[str]) -> set[str]:
    """The names the pieces' code uses (none where one does not parse: it then fails the check)."""
    used: set[str] = set()
    for code in codes:
        used |= imports.names_used_in(code) or set()
    return used


def _file_imports(lines: list[str], top: pieces.TopLevel) -> list[cst.SimpleStatementLine]:
    """The file's top-level import lines, parsed apart (they are few)."""
    spans = dict.fromkeys((top.firsts[i], top.lasts[i]) for i in top.imports)
    text = "".join("".join(lines[first - 1 : last]) for first, last in spans)
    return [line for line in cst.parse_module(text).body if isinstance(line, cst.SimpleStatementLine)]


def _shifted(finding: Finding, lines: int) -> Finding:
    if not finding.start_line:  # (a row about the file as a whole)
        return finding
    return replace(finding, start_line=finding.start_line + lines, end_line=finding.end_line + lines)


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
        """Inside `if guard:`, a nested `if guard:` is redundant: keep its body only; and so is
        `(a if guard else b)`: keep `a`."""
        if not self._is_guard(updated_node):
            return updated_node
        body = []
        for statement in updated_node.body.body:
            body.extend(statement.body.body if self._is_guard(statement) else [statement])
        block = updated_node.body.with_changes(body=body).visit(_GuardedExpressions(self.guard))
        return updated_node.with_changes(body=block)

    def leave_IndentedBlock(self, original_node, updated_node):  # noqa: N802
        return updated_node.with_changes(body=self._merge(updated_node.body))

    def leave_Module(self, original_node, updated_node):  # noqa: N802
        return updated_node.with_changes(body=self._merge(updated_node.body))


class _GuardedExpressions(cst.CSTTransformer):
    """Within a block that runs only when `guard` holds, `(a if guard else b)` is `a` (a
    statement guarded whole, whose call was guarded on its own too)."""

    def __init__(self, guard: str) -> None:
        super().__init__()
        self.guard = guard

    def visit_FunctionDef(self, node) -> bool:  # noqa: N802 (it runs later, when the guard may not hold)
        return False

    def visit_Lambda(self, node) -> bool:  # noqa: N802
        return False

    def leave_IfExp(self, original_node, updated_node):  # noqa: N802
        if source_of(updated_node.test) != self.guard:
            return updated_node
        kept = updated_node.body
        if isinstance(kept, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseString, cst.BaseNumber)):
            return kept  # (an atom needs no parentheses anywhere)
        return kept.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar) if not kept.lpar else kept


def _compile_error(source: bytes, path: str) -> str | None:
    """Why Python itself rejects `source` (None: it does not). Asked also where LibCST failed:
    Python's reason and line, not LibCST's grammar error; and where LibCST accepted what Python
    rejects (e.g. more than 200 nested brackets)."""
    problem = syntax_problem(source, path)
    return str(problem) if problem else None


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return f"{type(error).__name__}: {first}"


def _tidy_imports(
    cuda_imports: list[tuple], module: cst.Module, context: FileContext, used: set[str] | None = None,
) -> tuple[cst.Module, list[tuple]]:
    """The module with its imports and definitions in order, and a row for each kind of change:
    (operation, message, what its line says, whether that line is in the original).
    `cuda_imports`: the original's; `used`: the names the new code uses, where `module` does not
    hold it all (a skeleton: pieces.py)."""
    rows: list[tuple] = []
    if cuda_imports:
        module, removed = imports.remove_unused(module, cuda_imports, used)
        if removed:
            matches = lambda text: text.startswith(("import torch.cuda", "from torch.cuda", "from torch import"))  # noqa: E731
            rows.append((Operation.DELETE, "remove torch.cuda imports no longer used", matches, True))
    target = context.target
    wanted = sorted(name for name in context.needed_imports if not imports.binds(module, name))
    if wanted:
        module = imports.add(module, wanted)
        first = f"import {wanted[0]}"
        rows.append((Operation.INSERT, f"import what the new code uses: {', '.join(wanted)}", first.__eq__, False))
    if missing_setup_import(context, wanted):  # (else the script, TP022 or the new code's imports have it)
        module = imports.insert_after_torch_import(module, target.setup_import)
        rows.append((Operation.INSERT, f"insert import {target.setup_import}", f"import {target.setup_import}".__eq__, False))
    needed = [name for name in target.definitions if name in context.needed_definitions]
    definition_rows = []
    for name in reversed(needed):  # (each goes right after the imports: they end up in the target's order)
        statement = target.definitions[name]
        if not imports.has_statement(module, statement):
            module = imports.insert_after_imports(module, statement)
            first = statement.partition("\n")[0].removesuffix(":")
            definition_rows.append((Operation.INSERT, f"insert {first}", lambda text, first=first: text.startswith(first), False))
    return module, rows + definition_rows[::-1]  # (the rows in the order of the lines they insert)


def _import_finding(context: FileContext, operation: Operation, message: str, line: int) -> Finding:
    return Finding(context.path, line, line, IMPORT_CODE, operation, message)


def _line_of(lines: list[str], matches) -> int:
    """The number of the first of `lines` whose text `matches` (else 1)."""
    for number, text in enumerate(lines, start=1):
        if matches(text):
            return number
    return 1
