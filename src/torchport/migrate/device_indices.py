"""Which names in a file hold a CUDA device index: followed from where their value comes from.

On a CUDA build `model.to(self.gpu_id)` means `cuda:<gpu_id>` when `gpu_id` is an int. Whether a
name holds one is read from its sources, never from its spelling alone:
  - a rank read from the environment: `int(os.environ["LOCAL_RANK"])`, `.get(...)`, `os.getenv`;
  - a rank asked of torch.distributed: `dist.get_rank()`, `dist.get_node_local_rank()`;
  - the first parameter of a function started by `mp.spawn(fn, ...)` (the process index);
  - an argparse option `--local_rank` / `--local-rank` / `--gpu` (read as `args.local_rank`);
  - and any name or attribute assigned from one of these (`self.gpu_id = gpu_id`);
  - an element of a list of indices (`device_ids[0]`): a name passed as DDP's or DataParallel's
    `device_ids` (`DDP(model, device_ids)`, `device_ids=gpus`), written `name[]` among the names.
Names are compared as dotted source text (`self.gpu_id`, `args.gpu`), file-wide.
"""

from __future__ import annotations

import ast
import re

from torchport.pyast import dotted_name

# The same sources, as the text a file must contain to have one (the pre-filter's part).
INDEX_SOURCES = (rb"LOCAL_RANK|[\"']RANK[\"']|get_(?:node_)?(?:local_)?rank\(|spawn\(|--local[_-]rank|--gpu\b|"
                 rb"device_ids\s*=|DataParallel\b")
RANK_VARIABLE = re.compile(r"(LOCAL_)?RANK")
RANK_QUERIES = {"get_rank", "get_local_rank", "get_node_local_rank"}
INDEX_OPTIONS = {"local_rank", "local-rank", "gpu", "gpu_id", "gpu-id"}
SPAWNS = {"spawn", "start_processes"}
# The classes whose second positional argument (or `device_ids=`) is a list of device indices.
INDEX_LIST_TAKERS = {"DistributedDataParallel", "DataParallel"}
LIST = "[]"  # `name[]`: an element of the list `name` is an index (`device_ids[0]`)


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
        self.takers: set[str] = set(INDEX_LIST_TAKERS)  # what DDP and DataParallel are called here (`DDP`)
        self.lists: set[str] = set()  # names passed as device_ids
        self.positional_lists: list[tuple[str, str]] = []  # (callee, name) of `f(model, name)`

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
                else:
                    self._add_index_lists(node, called)
                if called == "add_argument":
                    for arg in node.args:
                        option = _string(arg)
                        if option and option.startswith("--") and option[2:] in INDEX_OPTIONS:
                            self.options.add(option[2:].replace("-", "_"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.first_parameters[node.name] = node.args.args[0].arg if node.args.args else None
            elif isinstance(node, ast.ImportFrom):
                self.takers.update(a.asname for a in node.names if a.name in INDEX_LIST_TAKERS and a.asname)

    def _add_index_lists(self, call: ast.Call, called: str) -> None:
        for keyword in call.keywords:
            name = dotted_name(keyword.value) if keyword.arg == "device_ids" else None
            if name is not None:
                self.lists.add(name)
        if len(call.args) > 1 and not isinstance(call.args[0], ast.Starred):
            name = dotted_name(call.args[1])
            if name is not None:
                self.positional_lists.append((called, name))

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
        lists = self.lists | {name for called, name in self.positional_lists if called in self.takers}
        return frozenset(found | {name + LIST for name in lists})


def mentions_of(names: frozenset[str]) -> bytes:
    """What a definition that sets, copies or uses one of `names` must contain (its last part as
    a word, e.g. `gpu_id` for `self.gpu_id`), and what sets one up: for the elision to keep it."""
    words = sorted({name.removesuffix(LIST).rsplit(".", 1)[-1] for name in names})
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
