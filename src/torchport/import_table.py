"""What the names in a file refer to, read from its imports: `tc.synchronize` is `torch.cuda.synchronize`.

LibCST's QualifiedNameProvider answers this with a full scope analysis, which costs about four
times the parse. Nearly every file binds the names that matter (`torch`, `cuda`, `autocast`)
by imports alone, and then its import statements say everything. `ImportTable.of` reads them
with `ast`. A name that an import binds to something in torch but that a function or class
binds another way (a parameter, a local, a different import) is *ambiguous*: only a scope
analysis can say which binding a use sees, and the caller runs one if such a name is asked about.
When the functions and classes that rebind it are known by name, a use outside all of them sees
the module-level import, and only uses inside them need the analysis (`shadowed_in`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from torchport.apis.amp import CUDA_AMP
from torchport.apis.cuda_module import DEVICE_MODULE
from torchport.pyast import AST_PARSE_ERRORS


# Modules whose aliases are followed (`CD = torch.cuda; CD.synchronize()`); an alias of a function
# or class is a value the script keeps (`amp_autocast = torch.cuda.amp.autocast`), rewritten where it is made.
FOLLOWED_MODULES = {DEVICE_MODULE, CUDA_AMP, "torch.cuda.nvtx", "torch.backends.cudnn", "torch.distributed"}


@dataclass(frozen=True)
class ImportTable:
    bindings: dict[str, str]  # local name -> what it refers to ("tc" -> "torch.cuda")
    # names bound to torch only in some scopes (a scope analysis tells which), with their torch meanings
    ambiguous: dict[str, frozenset[str]] = field(default_factory=dict)
    # ambiguous names whose module-level meaning is in `bindings`: the names of the functions and
    # classes that bind them another way (a use inside none of these sees the module's import)
    shadowed_in: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, source: bytes | str) -> ImportTable | None:
        """The file's import table, or None when it does not parse."""
        try:
            tree = ast.parse(source)
        except AST_PARSE_ERRORS:
            return None
        return cls.of_tree(tree)

    @classmethod
    def of_tree(cls, tree: ast.Module) -> ImportTable:
        """The import table of a module already parsed with `ast`."""
        return cls.of_trees([tree])

    @classmethod
    def of_trees(cls, trees) -> ImportTable:
        """The import table of a module read in parts: the trees of its parts, in order (each is
        dropped once read, where `trees` is an iterator)."""
        found = _Bindings()
        for tree in trees:
            found.visit_scope(tree.body, nested=False)
        bindings, ambiguous, shadowed_in = {}, {}, {}
        for name, dotted in found.aliases.items():
            resolved = _resolve_alias(found.imports, dotted)
            if resolved is None or len(dotted) > 1 or name in found.imports or name in found.nested_other:
                found.module_other.add(name)
            elif name not in found.module_other:
                bindings[name] = resolved
        for name, targets in found.imports.items():
            torch = sorted(t for t in targets if t == "torch" or t.startswith("torch."))
            if not torch:
                bindings[name] = min(targets)
            elif name in found.nested_other or (
                name in found.nested_imports and (len(targets) > 1 or name in found.module_other)
            ):
                ambiguous[name] = frozenset(torch)
                owners = found.nested_owners.get(name, set())
                at_module_level = found.module_imports.get(name, set())
                if ANYWHERE not in owners and len(at_module_level) == 1 and name not in found.module_other:
                    bindings[name] = min(at_module_level)
                    shadowed_in[name] = frozenset(owners)
            else:
                # Every binding is at module level, where a scope analysis sees all of them at
                # once: a torch one among them decides (as it does for Rule.qualified_name).
                bindings[name] = torch[0]
        return cls(bindings, ambiguous, shadowed_in)

    def meanings(self, dotted: str) -> list[str]:
        """What `dotted` may refer to in torch, when its first name is ambiguous."""
        root, _, rest = dotted.partition(".")
        return [f"{t}.{rest}" if rest else t for t in sorted(self.ambiguous.get(root, ()))]

    def qualified_name(self, dotted: str) -> str | None:
        """What `dotted` (e.g. `tc.synchronize`) refers to, if its first name was imported."""
        root, _, rest = dotted.partition(".")
        target = self.bindings.get(root)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target


ANYWHERE = ""  # the owner of a binding no named function or class encloses (a module-level
# comprehension or lambda), or one that `global` makes module-wide


class _Bindings:
    """Where names are bound: by imports (anywhere), and otherwise inside functions and classes.
    A binding inside one is recorded with its *owner*: the innermost named function or class."""

    def __init__(self) -> None:
        self.imports: dict[str, set[str]] = {}
        self.module_imports: dict[str, set[str]] = {}  # imported at module level
        self.nested_imports: set[str] = set()  # imported inside a function or class
        self.nested_other: set[str] = set()  # bound by other means inside one (or declared global)
        self.nested_owners: dict[str, set[str]] = {}  # name -> owners of its bindings inside one
        self.module_other: set[str] = set()  # bound by other means at module level
        self.aliases: dict[str, list[str]] = {}  # `CD = torch.cuda` at module level: "CD" -> ["torch.cuda"]

    def visit_scope(self, nodes, nested: bool, owner: str = ANYWHERE) -> None:
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, nested, owner)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._other(node.name, nested, owner)
                outer = [*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())]
                stack.extend(n for n in [*outer, getattr(node, "returns", None)] if n is not None)
                inner = node.body if isinstance(node, ast.ClassDef) else [node.args, *node.body]
                self.visit_scope(inner, nested=True, owner=node.name)
            elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                self.visit_scope(list(ast.iter_child_nodes(node)), nested=True, owner=owner)
            elif not nested and _module_alias(node) is not None:
                name, dotted = _module_alias(node)
                self.aliases.setdefault(name, []).append(dotted)
            else:
                module_wide = isinstance(node, (ast.Global, ast.Nonlocal))
                for name in bound_names(node):
                    self._other(name, nested or module_wide, ANYWHERE if module_wide else owner)
                stack.extend(ast.iter_child_nodes(node))

    def _import(self, node, nested: bool, owner: str) -> None:
        if isinstance(node, ast.Import):
            pairs = [(a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in node.names]
        else:
            module = "." * node.level + (node.module or "")
            prefix = module if module.endswith(".") else module + "."
            pairs = [(a.asname or a.name, prefix + a.name) for a in node.names if a.name != "*"]
        for name, target in pairs:
            self.imports.setdefault(name, set()).add(target)
            if nested:
                self.nested_imports.add(name)
                self.nested_owners.setdefault(name, set()).add(owner)
            else:
                self.module_imports.setdefault(name, set()).add(target)

    def _other(self, name: str, nested: bool, owner: str) -> None:
        (self.nested_other if nested else self.module_other).add(name)
        if nested:
            self.nested_owners.setdefault(name, set()).add(owner)


def bound_names(node: ast.AST) -> list[str]:
    """Names `node` binds, other than by an import."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _module_alias(node: ast.AST) -> tuple[str, str] | None:
    """("CD", "torch.cuda") for `CD = torch.cuda`: a name given to a dotted name."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    parts, value = [], node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not parts or not isinstance(value, ast.Name):
        return None
    return node.targets[0].id, ".".join([value.id, *reversed(parts)])


def _resolve_alias(imports: dict[str, set[str]], dotted: list[str]) -> str | None:
    """What the one dotted name given to an alias refers to in torch, through the file's imports."""
    root, _, rest = dotted[0].partition(".")
    targets = imports.get(root, set())
    if len(targets) != 1:
        return None
    (target,) = targets
    resolved = f"{target}.{rest}" if rest else target
    return resolved if resolved in FOLLOWED_MODULES else None
