"""Where a file refers to torch's APIs: each reference's qualified name and lines, through the
file's imports (`import torch.nn.functional as F`, `from torch import nn`, `from torch import
from_tensor`), for the rules that check every torch API (TP026, TP027).

Cheap first, as these rules read every file that uses torch: `spelled` reads the text alone (a
regex over the import lines and the dotted names their bindings start, no parse), which says every
name `references` could find and more (names in comments and strings too). A rule parses the file
only when one of those concerns it, which few files have. `references` then reads the `ast`:
loads only (never `torch.foo = x`), names as the import table resolves them (names.py: a name a
function rebinds is read only outside it), and none inside code that asks whether the name exists
first (`hasattr(torch, ...)`, `torch.__version__`, a `try:` that catches AttributeError or
ImportError), where a missing name is the script's own concern.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

from torchport.migrate import pieces
from torchport.import_table import ImportTable
from torchport.pyast import AST_PARSE_ERRORS, dotted_name, parse_quietly
from torchport.targets.torch_api import torch_api

TORCH = "torch"
MENTIONS = rb"\btorch\.\w|\bfrom[ \t]+torch\b|\bimport[ \t]+torch[ \t]+as\b"
_IMPORT = re.compile(rb"import\b[ \t]*(\([^)]*\)|[^\n;]*)")  # (a literal first: found fast)
_FROM = re.compile(rb"from[ \t]+(torch(?:\.\w+)*)[ \t]+")
_ALIAS = re.compile(rb"=[ \t]*(torch(?:\.\w+)+)[ \t]*$", re.M)  # (`dist = torch.distributed`: found from its value)
_ALIAS_NAME = re.compile(rb"[ \t]*(\w+)[ \t]*")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
_NAME_AS = re.compile(rb"([\w.]+)(?:[ \t]+as[ \t]+(\w+))?")
# Strings and comments, which name torch's APIs more often than code: `spelled` reads past them,
# taken left to right as Python's tokenizer would (a `#` inside a string, a quote in a comment).
# Code inside an f-string's braces is read past too: a row there is not looked for.
_PROSE = re.compile(
    rb'(?:"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')|#[^\n]*'
)
GUARDING_TESTS = re.compile(r"\bhasattr\(|\bgetattr\(|__version__|(?i:torch_version)|\bTYPE_CHECKING\b")
GUARDING_ERRORS = {"AttributeError", "ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Reference:
    api: str  # what it refers to: "torch.nn.functional.relu"
    line: int
    end_line: int
    bound: str  # what the name it starts with is bound to ("torch.nn.functional" for `F.relu`)
    imported: bool = False  # the name of an import statement, not a use
    module: str = ""  # the part an import names as a module (`from torch.autograd.variable import ...`)


def _bindings(code: bytes) -> dict[bytes, str]:
    """Local name -> torch name, read from the import statements of `code`, and from `x = torch.y`
    aliases."""
    bound: dict[bytes, str] = {b"torch": TORCH}
    for match in _IMPORT.finditer(code):
        line_start = code.rfind(b"\n", 0, match.start()) + 1
        head = code[line_start : match.start()].rpartition(b";")[2].strip()
        module = _FROM.fullmatch(head + b" ") if head else None
        if head and module is None:
            continue  # (`from os import ...`, or not a statement's start)
        for name, alias in (m.groups() for m in _NAME_AS.finditer(match.group(1).strip(b"()"))):
            if module is not None:
                bound[alias or name] = f"{module.group(1).decode()}.{name.decode()}"
            elif name == b"torch" or name.startswith(b"torch."):
                bound[alias or b"torch"] = name.decode() if alias else TORCH
    for match in _ALIAS.finditer(code):
        name = _ALIAS_NAME.fullmatch(code, code.rfind(b"\n", 0, match.start()) + 1, match.start())
        if name is not None:
            bound.setdefault(name.group(1), match.group(1).decode())
    return bound


def spelled_any(source: bytes, concerns) -> bool:
    """Whether a torch name the text could refer to `concerns` a rule (a predicate on qualified
    names): asked of the text as it is, then, if so, once more without its strings and comments."""
    return any(map(concerns, spelled(source))) and any(map(concerns, spelled(source, prose=False)))


@lru_cache(maxsize=8)
def spelled(source: bytes, prose: bool = True) -> frozenset[str]:
    """Every torch name the text could refer to (a superset of `references`' names); `prose`:
    with what its strings and comments spell."""
    code = source if prose else _PROSE.sub(b"", source)
    bound = _bindings(code)
    found = set(bound.values())
    named = torch_api().names_below  # (`from torch.fx import Graph`: nothing below it is judged)
    roots = tuple(sorted((name for name, api in bound.items() if named(api)), key=len, reverse=True))
    for match in _dotted(roots).finditer(code) if roots else ():
        if match.start() == 0 or code[match.start() - 1] not in _WORD:  # (not `x.torch.y`, `mytorch.y`)
            root, rest = match.groups()
            found.add(bound[root] + rest.decode("ascii", "replace"))
    return frozenset(found)


@lru_cache(maxsize=64)
def _dotted(roots: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """Dotted names that start with one of `roots`, or a name that ends with one (the caller
    tells them apart: a leading `\\b` would make the regex try every position)."""
    return re.compile(rb"(" + b"|".join(map(re.escape, roots)) + rb")((?:\.\w+)+)")


@lru_cache(maxsize=4)
def references(source: bytes) -> tuple[Reference, ...]:
    """The file's references to torch names, in order; none where Python cannot read it. A large
    file is read a piece at a time, as the pass reads it (pieces.py)."""
    try:
        trees = _trees(source)
        reader = _Reader(ImportTable.of_trees(trees()))
        for tree in trees():
            reader.visit(tree)
    except AST_PARSE_ERRORS:
        return ()
    return tuple(reader.found)


def _trees(source: bytes):
    if len(source) <= pieces.READ_WHOLE_BYTES:
        tree = parse_quietly(source)
        if tree is None:
            raise SyntaxError("not Python")
        return lambda: iter([tree])
    return pieces.AstPieces(source.splitlines(keepends=True), pieces.encoding_of(source)).trees


class _Reader(ast.NodeVisitor):
    def __init__(self, imports: ImportTable) -> None:
        self.imports = imports
        self.found: list[Reference] = []
        self.owners: list[str] = []  # the named functions and classes around the node
        self.guarded = 0

    def visit_Import(self, node: ast.Import) -> None:  # noqa: N802
        for alias in node.names:
            if alias.name == TORCH or alias.name.startswith(TORCH + "."):
                self._add(alias.name, node, alias.name, imported=True, module=alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802
        module = node.module or ""
        if node.level == 0 and (module == TORCH or module.startswith(TORCH + ".")):
            for alias in node.names:
                if alias.name != "*":
                    self._add(f"{module}.{alias.name}", node, module, imported=True, module=module)

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        dotted = dotted_name(node)
        if dotted is None:
            self.generic_visit(node)  # (`f(x).y`: the call's own names are read)
        elif isinstance(node.ctx, ast.Load):
            self._use(dotted, node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802
        if isinstance(node.ctx, ast.Load):
            self._use(node.id, node)

    def _use(self, dotted: str, node: ast.AST) -> None:
        root = dotted.split(".", 1)[0]
        if root in self.imports.ambiguous and not self._sees_import(root):
            return
        bound = self.imports.bindings.get(root)
        if bound is None and root == TORCH and root not in self.imports.ambiguous:
            bound = TORCH  # (torch used without an import: read as written, as the pass does)
        if bound is not None and (bound == TORCH or bound.startswith(TORCH + ".")):
            rest = dotted[len(root):]
            self._add(bound + rest, node, bound)

    def _sees_import(self, name: str) -> bool:
        shadowing = self.imports.shadowed_in.get(name)
        return shadowing is not None and not any(owner in shadowing for owner in self.owners)

    def _add(self, api: str, node: ast.AST, bound: str, imported: bool = False, module: str = "") -> None:
        if not self.guarded:
            self.found.append(Reference(api, node.lineno, node.end_lineno or node.lineno, bound, imported, module))

    # --- where the names are, and whether the code asks for them first -------------------
    def _owned(self, node) -> None:
        """A function or class: its annotations are not read (they need not run, and often
        name what exists only for a type checker)."""
        for outer in (*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())):
            self.visit(outer)
        if not isinstance(node, ast.ClassDef):
            self.visit(node.args)
        self.owners.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.owners.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _owned  # noqa: N815

    def visit_arg(self, node: ast.arg) -> None:  # noqa: N802
        pass  # (a parameter's name and annotation)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        if node.value is not None:
            self.visit(node.value)

    def visit_If(self, node: ast.If) -> None:  # noqa: N802
        self._branches(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:  # noqa: N802
        self._branches(node)

    def _branches(self, node) -> None:
        guarding = bool(GUARDING_TESTS.search(ast.unparse(node.test)))
        self.guarded += guarding  # (`hasattr(torch, "hpu") and torch.hpu.is_available()`: the test too)
        self.visit(node.test)
        for child in (node.body, node.orelse):
            for statement in child if isinstance(child, list) else [child]:
                self.visit(statement)
        self.guarded -= guarding

    def visit_Try(self, node: ast.Try) -> None:  # noqa: N802
        caught = {name for handler in node.handlers for name in _caught(handler)}
        guarding = bool(caught & GUARDING_ERRORS)
        self.guarded += guarding
        for statement in node.body:
            self.visit(statement)
        self.guarded -= guarding
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try  # noqa: N815


def _caught(handler: ast.ExceptHandler) -> list[str]:
    if handler.type is None:
        return ["BaseException"]
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [(dotted_name(t) or "").rsplit(".", 1)[-1] for t in types]
