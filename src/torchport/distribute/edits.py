"""What the steps share: a module read once with the metadata they ask about (lines, qualified
names, parents), and a set of statement edits (insert before or after, replace, remove) applied
in one pass, so each step describes what it changes and never re-walks the tree to change it.

A step's edits rebuild only the nodes on the way to what they change; the next step reads the
tree they made (the nodes it shares with the one before, unchanged) and is spared a parse."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, QualifiedNameSource

from torchport.import_table import ImportTable
from torchport.layout import Layout

BLOCKS = (cst.Module, cst.IndentedBlock)
SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# (LibCST's node classes are ABCs: `isinstance` goes through ABCMeta for each node of a walk. No
# class derives from these, so the walks compare the type itself.)
_SCOPE_TYPES = frozenset(SCOPES)


class Read:
    """One parse of a step's input text, with what the steps look up in it."""

    _last: tuple[str, "Read"] | None = None
    _imports: "ImportTable | None | bool" = False  # (read from the imports when a name is first asked)
    _import_nodes: list[cst.CSTNode] | None = None  # (the nodes the import table is read from)
    # the last tree a step's edits made: its text, the tree, its layout, and the import table it kept (or None)
    _made: tuple[str, cst.Module, Layout, tuple[ImportTable, list[cst.CSTNode]] | None] | None = None

    @classmethod
    def of(cls, text: str) -> "Read":
        """`Read(text)`, or the last one made when it was of the same text: a step that changes
        nothing hands the next the text it was given, and the metadata (most of a step's cost)
        is not resolved again. Text the last step's edits made is read from their tree."""
        last = cls._last  # (read once: another thread may set it meanwhile)
        if last is None or last[0] != text:
            forget_children()
            made = cls._made
            read = cls(text, *made[1:]) if made is not None and made[0] == text else cls(text)
            last = cls._last = (text, read)
        return last[1]

    @classmethod
    def forget(cls) -> None:
        """Let go of the trees read and made: a file's distribution is over, and the migration
        that follows reads its own."""
        cls._last = cls._made = None
        forget_children()

    @classmethod
    def laid_out(cls, text: str) -> Layout | None:
        """The layout of the tree of `text` the last step read or made (None: none of `text`, or
        not laid out)."""
        made = cls.tree_made(text)
        if made:
            return made[1]
        last = cls._last  # (read once: another thread may set it meanwhile)
        return last[1]._layout if last is not None and last[0] == text else None

    @classmethod
    def tree_made(cls, text: str) -> tuple[cst.Module, Layout] | tuple[()]:
        """(tree, layout) where `text` is the text the last step's edits made (see `edited`), else ()."""
        made = cls._made  # (read once: another thread may set it meanwhile)
        return made[1:3] if made is not None and made[0] == text else ()

    def __init__(self, text: str, module: cst.Module | None = None, layout: Layout | None = None,
                 imports: tuple[ImportTable, list[cst.CSTNode]] | None = None):
        self.text = text
        self._module = module  # (parsed when first asked: a file with no word of training never is)
        self._layout = layout  # (printed when a line or a parent is first asked)
        if layout is not None:
            _index(layout)
        if imports:  # (the table of the tree this one was made from)
            self._imports, self._import_nodes = imports
        self._scope_names = None  # (a scope analysis, only where the imports leave a name ambiguous)

    @property
    def module(self) -> cst.Module:
        if self._module is None:
            self._module = cst.parse_module(self.text)
        return self._module

    def edited(self, module: cst.Module) -> str:
        """The text of `module`, a tree a step's edits made of this one (its untouched nodes are
        not printed again). The next `Read.of` that text reads the tree itself (unless it holds a
        node in two places: then it parses the text), with this one's import table where the
        edits neither import nor bind a name of it."""
        layout = Layout(module, self.layout)
        Read._made = None if layout.shared else (layout.code, module, layout, self._imports_kept(layout))
        return layout.code

    def _imports_kept(self, made: Layout) -> tuple[ImportTable, list[cst.CSTNode]] | None:
        """This tree's import table and the nodes it is read from, where they hold for `made`."""
        table = self._imports
        if not isinstance(table, ImportTable):
            return None  # (not read, or not readable: the next step reads its own if it asks)
        names = table.bindings.keys() | table.ambiguous.keys()
        if self._import_nodes is None:
            self._import_nodes = [n for n in self.layout.order if _may_bind(n, names, self.layout.parents)]
        if any(node not in made.lines for node in self._import_nodes):
            return None  # (an import or a binding taken out)
        if any(_may_bind(node, names, made.parents) or _may_alias(node, names) for node in made.printed):
            return None
        return table, self._import_nodes

    @property
    def layout(self) -> Layout:
        if self._layout is None:
            self._layout = _index(Layout(self.module))
        return self._layout

    def line(self, node: cst.CSTNode) -> int:
        return self.layout.lines[node][0]

    def end_line(self, node: cst.CSTNode) -> int:
        return self.layout.lines[node][1]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.layout.parents.get(node)

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The imported names `node` may refer to (`mp.spawn` -> {"torch.multiprocessing.spawn"}),
        read from the file's imports (import_table.py); a name they bind in more than one way, or
        a file `ast` cannot read (newer syntax than this Python's), asks LibCST's scope analysis."""
        name = dotted(node)
        if name is None:
            return set()
        table = self.imports()
        if table is None or name.partition(".")[0] in table.ambiguous:
            return self._scope_qualified(node)
        found = table.qualified_name(name)
        return {found} if found else set()

    def imports(self, tree: ast.Module | None = None) -> ImportTable | None:
        """The file's import table (None: `ast` cannot read the file), read from `tree` (the
        file's `ast` parse) where one is given and the table is not read yet."""
        if self._imports is False:
            self._imports = ImportTable.of(self.text) if tree is None else ImportTable.of_tree(tree)
        return self._imports

    def _scope_qualified(self, node: cst.CSTNode) -> set[str]:
        if self._scope_names is None:  # (the tree was parsed or built here: no one else holds it)
            self._scope_names = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
        value = self._scope_names.get(node, ())
        return {q.name for q in (value() if callable(value) else value) if q.source is QualifiedNameSource.IMPORT}

    def is_api(self, node: cst.CSTNode, apis) -> bool:
        return bool(self.qualified(node) & set(apis))

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement (simple line or compound) directly in a block that holds `node`."""
        while node is not None:
            parent = self.parent(node)
            if isinstance(node, cst.BaseStatement) and isinstance(parent, BLOCKS):
                return node
            node = parent
        return None

    def block_of(self, statement: cst.BaseStatement) -> cst.Module | cst.IndentedBlock:
        return self.parent(statement)

    def enclosing_blocks(self, statement: cst.BaseStatement) -> Iterator[tuple[cst.CSTNode, cst.BaseStatement]]:
        """(block, the statement of that block that holds `statement`), innermost first, up to the
        function, class or module it is in."""
        node = statement
        while node is not None:
            parent = self.parent(node)
            if isinstance(node, cst.BaseStatement) and isinstance(parent, BLOCKS):
                yield parent, node
                if isinstance(parent, cst.Module):
                    return
                if isinstance(self.parent(parent), SCOPES):
                    return
            node = parent

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function, class or module `node` is in."""
        node = self.parent(node)
        while node is not None and not isinstance(node, (*SCOPES, cst.Module)):
            node = self.parent(node)
        return node


# Where a name is read, never bound: the parents a name may have in an expression (as an
# assignment's value too); any other parent may bind it (a target, a parameter, a definition).
_READ_IN = frozenset({cst.Attribute, cst.Call, cst.Arg, cst.Subscript, cst.Index, cst.BinaryOperation,
                      cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.ComparisonTarget, cst.Expr,
                      cst.Return, cst.Assert, cst.Await, cst.IfExp, cst.If, cst.While, cst.FormattedStringExpression,
                      cst.DictElement, cst.Decorator, cst.Slice, cst.Annotation})
_VALUE_OF = frozenset({cst.Assign, cst.AugAssign, cst.AnnAssign})
_IMPORT_TABLE_STATEMENTS = frozenset({cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal})


def _may_bind(node: cst.CSTNode, names, parents) -> bool:
    """Whether `node` may change what an import table says of `names`: an import, a `global` or
    `nonlocal`, or one of the names anywhere but where it is read."""
    kind = type(node)
    if kind in _IMPORT_TABLE_STATEMENTS:
        return True
    if kind is not cst.Name or node.value not in names:
        return False
    parent = parents.get(node)
    kind = type(parent)
    return not (kind in _READ_IN or (kind in _VALUE_OF and parent.value is node))


def _may_alias(node: cst.CSTNode, names) -> bool:
    """`name = a.b` where `a` is one of `names`: an alias an import table may follow
    (import_table._module_alias)."""
    if type(node) is not cst.Assign or type(node.value) is not cst.Attribute:
        return False
    root = node.value
    while type(root) is cst.Attribute:
        root = root.value
    return type(root) is cst.Name and root.value in names


_CHILDREN: dict[cst.CSTNode, Sequence[cst.CSTNode]] = {}  # (emptied when a new text is read: it holds the nodes)
_READING: list[Layout] = []  # the layout of the tree a step is reading, once printed (emptied with _CHILDREN)


def _index(layout: Layout) -> Layout:
    """`layout`'s children and order, for `walk` (the tree a step is reading)."""
    _CHILDREN.update(layout.children)
    _READING[:] = [layout]
    return layout


def children_of(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`, built once per node: LibCST's property visits the node anew each time it
    is asked, and the steps walk the same tree many times (nodes never change: a tree that differs
    is made of other nodes)."""
    found = _CHILDREN.get(node)
    if found is None:
        found = _CHILDREN[node] = tuple(node.children)
    return found


def forget_children() -> None:
    _CHILDREN.clear()
    _READING.clear()


def _reading() -> Layout | None:
    """The layout of the tree a step is reading (None: none printed yet), read once: a layout
    read meanwhile replaces it."""
    return (_READING[:] or [None])[0]


def walk(node: cst.CSTNode, into_scopes: bool = True, layout: Layout | None = None) -> Iterator[cst.CSTNode]:
    """`node` and every node below it (not into nested functions, classes and lambdas when
    `into_scopes` is false), from `layout` (default: the layout of the tree a step is reading,
    where it holds `node`: a statement's nodes are a stretch of its order), else from the
    children of the trees read, built once per node."""
    laid_out = layout if layout is not None else _reading()
    extent = _extent(laid_out, node) if laid_out is not None else None
    if extent is not None:
        yield from _stretch(laid_out, *extent, into_scopes)
        return
    children = children_of if layout is None else lambda current: layout.children.get(current, ())
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not into_scopes and current is not node and type(current) in _SCOPE_TYPES:
            continue
        stack.extend(reversed(children(current)))


def _extent(layout: Layout, node: cst.CSTNode) -> tuple[int, int] | None:
    """`node`'s stretch of `layout`'s order (all of it for its module; None: no stretch known)."""
    return (0, len(layout.order)) if node is layout.module else layout.extent(node)


def _stretch(layout: Layout, first: int, last: int, into_scopes: bool) -> Iterator[cst.CSTNode]:
    """order[first:last] of `layout`, less what nested scopes hold unless `into_scopes`."""
    order = layout.order
    if into_scopes:
        yield from order[first:last]
        return
    yield order[first]
    index = first + 1
    while index < last:
        current = order[index]
        yield current
        index = layout.extent(current)[1] if type(current) in _SCOPE_TYPES else index + 1


def nodes(node: cst.CSTNode, *kinds: type, into_scopes: bool = True) -> Iterable[cst.CSTNode]:
    """The nodes of these exact types in `node` (itself included), in a walk's order; those of the
    whole module a step reads are sorted out of its layout once, those of one of its statements
    picked from its stretch of the layout's order (lists), others found as they are walked (a
    generator: a search that stops at the first stops the walk)."""
    wanted = frozenset(kinds)
    reading = _reading()
    if reading is not None:
        if into_scopes and node is reading.module:
            return reading.of_types(wanted)
        extent = _extent(reading, node)
        if extent is not None:
            return [n for n in _stretch(reading, *extent, into_scopes) if type(n) in wanted]
    return (n for n in walk(node, into_scopes) if type(n) in wanted)


def calls(node: cst.CSTNode, into_scopes: bool = True) -> Iterable[cst.Call]:
    return nodes(node, cst.Call, into_scopes=into_scopes)


def dotted(node: cst.CSTNode) -> str | None:
    """`a.b.c` for a chain of names, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


ASSIGNMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign)  # (the nodes that assign to what they are written with)


def assigned_targets(node: cst.CSTNode, loops: bool = False) -> list[cst.BaseExpression]:
    """What `node` assigns to, as written (a name, a tuple, `a.b`, `a[i]`) when it is an assignment
    (`=`, annotated, augmented) or, with `loops`, a for loop; else nothing."""
    if isinstance(node, cst.Assign):
        return [t.target for t in node.targets]
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)) or (loops and isinstance(node, cst.For)):
        return [node.target]
    return []


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def argument(call: cst.Call, keyword: str, position: int | None) -> cst.Arg | None:
    """The argument given as `keyword=`, or in place `position` (None: keyword only)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and position < len(positional):
        return positional[position]
    return None


def statements(text: str) -> list[cst.BaseStatement]:
    """Statements parsed from `text` (comment lines above the first stay with it)."""
    module = cst.parse_module(text)
    body = list(module.body)
    if body and module.header:  # (LibCST keeps a module's first comments in its header)
        body[0] = body[0].with_changes(leading_lines=[*module.header, *body[0].leading_lines])
    return body


def imported_names(module: cst.Module) -> set[str]:
    """The names the module's top-level `import x` statements bind (`import torch.nn` binds torch)."""
    bound = set()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None:
                            bound.add(dotted(alias.name).split(".")[0])
    return bound


def is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def is_future_import(statement: cst.CSTNode) -> bool:
    return is_import_line(statement) and any(
        isinstance(s, cst.ImportFrom) and s.module is not None and dotted(s.module) == "__future__"
        for s in statement.body)


def is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def first_code(module: cst.Module) -> cst.BaseStatement | None:
    """The first statement after the docstring and the `__future__` imports."""
    return next((s for s in module.body if not (is_docstring(s) or is_future_import(s))), None)


def import_missing(found: Read, edits: Edits, wanted) -> tuple[list[str], int]:
    """`import x` for each of `wanted` the module does not bind at its top level, put before its
    first import (after its docstring and `__future__` imports); (what was missing, the line)."""
    module = found.module
    missing = [name for name in wanted if name not in imported_names(module)]
    if not missing:
        return [], 0
    new = statements("".join(f"import {name}\n" for name in missing))
    first = next((s for s in module.body if is_import_line(s) and not is_future_import(s)), None) or first_code(module)
    if first is None:
        edits.append(module, new)
        return missing, 1
    edits.insert_before(first, new)
    return missing, found.line(first)


class Edits:
    """Statement edits keyed by the nodes of one `Read`, applied together by `apply`."""

    def __init__(self) -> None:
        self.before: dict[cst.CSTNode, list[cst.BaseStatement]] = {}
        self.after: dict[cst.CSTNode, list[cst.BaseStatement]] = {}
        self.replaced: dict[cst.CSTNode, cst.CSTNode] = {}
        self.removed: set[cst.CSTNode] = set()
        self.at_end: dict[cst.CSTNode, list[cst.BaseStatement]] = {}  # block -> statements appended

    def insert_before(self, statement, new: list[cst.BaseStatement]) -> None:
        self.before.setdefault(statement, []).extend(new)

    def insert_after(self, statement, new: list[cst.BaseStatement]) -> None:
        self.after.setdefault(statement, []).extend(new)

    def append(self, block, new: list[cst.BaseStatement]) -> None:
        self.at_end.setdefault(block, []).extend(new)

    def replace(self, node, new) -> None:
        self.replaced[node] = new

    def remove(self, statement) -> None:
        self.removed.add(statement)

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.replaced or self.removed or self.at_end)

    def apply(self, found: Read) -> str:
        """The text of `found`'s module with the edits made. Only the nodes on the way to an
        edit are rebuilt: the tree made shares the rest with `found`'s, and the next step that
        reads this text reads that tree."""
        if not self:
            return found.text
        edited = on_the_way(found, [*self.before, *self.after, *self.replaced, *self.removed, *self.at_end])
        return found.edited(found.module.visit(_Apply(self, edited)))


def on_the_way(found: Read, targets) -> set[cst.CSTNode]:
    """`targets` and every node above them: what a transformer that edits them descends into
    (it leaves every other node as it is, the same object)."""
    nodes = set(targets)
    for node in targets:
        node = found.parent(node)
        while node is not None and node not in nodes:
            nodes.add(node)
            node = found.parent(node)
    return nodes


class _Apply(cst.CSTTransformer):
    def __init__(self, edits: Edits, on_the_way: set[cst.CSTNode]):
        super().__init__()
        self.edits = edits
        self.on_the_way = on_the_way

    def on_visit(self, node) -> bool:
        return node in self.on_the_way

    def on_leave(self, original, updated):
        if original not in self.on_the_way:
            return updated
        if original in self.edits.replaced:
            updated = self.edits.replaced[original]
        if isinstance(original, BLOCKS):
            updated = updated.with_changes(body=self._body(original, updated))
        return updated

    def _body(self, original, updated) -> list[cst.BaseStatement]:
        body: list[cst.BaseStatement] = []
        edits = self.edits
        for old, new in zip(original.body, updated.body):
            before = list(edits.before.get(old, ()))
            if before and old not in edits.removed:
                # the comments above a statement stay above what is put before it
                before[0] = before[0].with_changes(leading_lines=[*new.leading_lines, *before[0].leading_lines])
                new = new.with_changes(leading_lines=[])
            body += before
            if old not in edits.removed:
                body.append(new)
            body += edits.after.get(old, ())
        body += edits.at_end.get(original, ())
        if not body and isinstance(original, cst.IndentedBlock):
            body = [cst.SimpleStatementLine([cst.Pass()])]
        return body
