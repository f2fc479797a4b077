"""Which names in a file hold a CUDA device index: followed from where their value comes from.

On a CUDA build `model.to(self.gpu_id)` means `cuda:<gpu_id>` when `gpu_id` is an int. Whether a
name holds one is read from its sources, never from its spelling alone:
  - a rank read from the environment: `int(os.environ["LOCAL_RANK"])`, `.get(...)`, `os.getenv`;
  - a rank asked of torch.distributed: `dist.get_rank()`, `dist.get_node_local_rank()`;
  - the first parameter of a function started by `mp.spawn(fn, ...)` (the process index);
  - an argparse option `--local_rank` / `--local-rank` / `--gpu` (read as `args.local_rank`);
  - and any name or attribute assigned from one of these (`self.gpu_id = gpu_id`).
Names are compared as dotted source text (`self.gpu_id`, `args.gpu`), file-wide.
"""

from __future__ import annotations

import ast
import re

from torchport.pyast import dotted_name

# The same sources, as the text a file must contain to have one (the pre-filter's part).
INDEX_SOURCES = rb"LOCAL_RANK|[\"']RANK[\"']|get_(?:node_)?(?:local_)?rank\(|spawn\(|--local[_-]rank|--gpu\b"
RANK_VARIABLE = re.compile(r"(LOCAL_)?RANK")
RANK_QUERIES = {"get_rank", "get_local_rank", "get_node_local_rank"}
INDEX_OPTIONS = {"local_rank", "local-rank", "gpu", "gpu_id", "gpu-id"}
SPAWNS = {"spawn", "start_processes"}


def index_names(tree: ast.Module) -> frozenset[str]:
    """The dotted names (`local_rank`, `self.gpu_id`, `args.gpu`) that hold a device index.

    Read with `ast` from the whole file (light, and before any code is set aside: the index may
    be set in one definition and used in another)."""
    found = IndexNames()
    found.add(tree)
    return found.names()


class IndexNames:
    """`index_names` of a file read in parts (each part's tree `add`ed in turn: a large file's
    whole tree would cost more memory than its migration)."""

    def __init__(self) -> None:
        self.found: set[str] = set()
        self.copies: list[tuple[str, str]] = []  # (target, value) of plain `a = b` assignments
        self.spawned: set[str] = set()  # names of functions started by mp.spawn
        self.first_parameters: dict[str, str | None] = {}  # function name -> its first parameter
        self.options: set[str] = set()  # argparse options that hold a device index
        self.parsed: set[str] = {"args"}  # names that hold parsed options (`args = parser.parse_args()`)

    def add(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [name for name in map(dotted_name, targets) if name is not None]
                if isinstance(node.value, ast.Call) and _called_name(node.value) == "parse_args":
                    self.parsed.update(names)
                source = dotted_name(node.value)
                for name in names:
                    if _is_rank_source(node.value):
                        self.found.add(name)
                    elif source is not None:
                        self.copies.append((name, source))
            elif isinstance(node, ast.Call):
                called = _called_name(node)
                if called in SPAWNS and node.args and isinstance(node.args[0], ast.Name):
                    self.spawned.add(node.args[0].id)
                elif called == "add_argument":
                    for arg in node.args:
                        option = _string(arg)
                        if option and option.startswith("--") and option[2:] in INDEX_OPTIONS:
                            self.options.add(option[2:].replace("-", "_"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.first_parameters[node.name] = node.args.args[0].arg if node.args.args else None

    def names(self) -> frozenset[str]:
        found = set(self.found)
        found.update(f"{holder}.{option}" for holder in self.parsed for option in self.options)
        for name in self.spawned:
            parameter = self.first_parameters.get(name)
            if parameter is not None:
                found.add(parameter)
        changed = True
        while changed:  # follow assignments from names already known, until nothing new is found
            changed = False
            for target, value in self.copies:
                if value in found and target not in found:
                    found.add(target)
                    changed = True
        return frozenset(found)


def mentions_of(names: frozenset[str]) -> bytes:
    """What a definition that sets, copies or uses one of `names` must contain (its last part as
    a word, e.g. `gpu_id` for `self.gpu_id`), and what sets one up: for the elision to keep it."""
    words = sorted({name.rsplit(".", 1)[-1] for name in names})
    return b"|".join([INDEX_SOURCES, rb"\bparse_args\b", *(rb"\b" + re.escape(w.encode()) + rb"\b" for w in words)])


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_rank_source(value: ast.expr) -> bool:
    """`int(os.environ["LOCAL_RANK"])`, `int(os.getenv("RANK", 0))`, `dist.get_rank()`, ..."""
    if not isinstance(value, ast.Call):
        return False
    if _called_name(value) in RANK_QUERIES:
        return True
    if _called_name(value) != "int" or not value.args:
        return False
    inner = value.args[0]
    key = None
    if isinstance(inner, ast.Subscript):
        key = _string(inner.slice)
    elif isinstance(inner, ast.Call) and _called_name(inner) in ("get", "getenv") and inner.args:
        key = _string(inner.args[0])
    return key is not None and RANK_VARIABLE.fullmatch(key) is not None
