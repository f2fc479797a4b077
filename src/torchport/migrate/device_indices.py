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

import re

import libcst as cst

# The same sources, as the text a file must contain to have one (the pre-filter's part).
INDEX_SOURCES = rb"\bLOCAL_RANK\b|[\"']RANK[\"']|\bget_(?:node_)?(?:local_)?rank\(|\bspawn\(|--local[_-]rank|--gpu\b"
RANK_VARIABLE = re.compile(r"(LOCAL_)?RANK")
RANK_QUERIES = {"get_rank", "get_local_rank", "get_node_local_rank"}
INDEX_OPTIONS = {"local_rank", "local-rank", "gpu", "gpu_id", "gpu-id"}
SPAWNS = {"spawn", "start_processes"}

_EMPTY = cst.Module([])


def index_names(module: cst.Module) -> frozenset[str]:
    """The dotted names (`local_rank`, `self.gpu_id`, `args.gpu`) that hold a device index."""
    finder = _Sources()
    module.visit(finder)
    names = set(finder.found)
    changed = True
    while changed:  # follow assignments from names already known, until nothing new is found
        changed = False
        for target, value in finder.copies:
            if value in names and target not in names:
                names.add(target)
                changed = True
    return frozenset(names)


def _dotted(node: cst.CSTNode) -> str | None:
    inner = node
    while isinstance(inner, cst.Attribute):
        inner = inner.value
    return _EMPTY.code_for_node(node) if isinstance(inner, cst.Name) else None


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _called_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _is_rank_source(value: cst.BaseExpression) -> bool:
    """`int(os.environ["LOCAL_RANK"])`, `int(os.getenv("RANK", 0))`, `dist.get_rank()`, ..."""
    if not isinstance(value, cst.Call):
        return False
    if _called_name(value) in RANK_QUERIES:
        return True
    if _called_name(value) != "int" or not value.args:
        return False
    inner = value.args[0].value
    key = None
    if isinstance(inner, cst.Subscript) and len(inner.slice) == 1 and isinstance(inner.slice[0].slice, cst.Index):
        key = _string(inner.slice[0].slice.value)
    elif isinstance(inner, cst.Call) and _called_name(inner) in ("get", "getenv") and inner.args:
        key = _string(inner.args[0].value)
    return key is not None and RANK_VARIABLE.fullmatch(key) is not None


class _Sources(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()
        self.copies: list[tuple[str, str]] = []  # (target, value) of plain `a = b` assignments
        self.spawned: set[str] = set()  # names of functions started by mp.spawn
        self.functions: dict[str, cst.FunctionDef] = {}
        self.options: set[str] = set()  # argparse options that hold a device index
        self.parsed: set[str] = {"args"}  # names that hold parsed options (`args = parser.parse_args()`)

    def visit_Assign(self, node: cst.Assign) -> None:  # noqa: N802
        self._assigned([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:  # noqa: N802
        if node.value is not None:
            self._assigned([node.target], node.value)

    def _assigned(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        names = [name for name in map(_dotted, targets) if name is not None]
        source = _dotted(value)
        if isinstance(value, cst.Call) and _called_name(value) == "parse_args":
            self.parsed.update(names)
        for name in names:
            if _is_rank_source(value):
                self.found.add(name)
            elif source is not None:
                self.copies.append((name, source))

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = _called_name(node)
        if name in SPAWNS and node.args and isinstance(node.args[0].value, cst.Name):
            self.spawned.add(node.args[0].value.value)
        elif name == "add_argument":
            for arg in node.args:
                option = _string(arg.value)
                if arg.keyword is None and option and option.startswith("--") and option[2:] in INDEX_OPTIONS:
                    self.options.add(option[2:].replace("-", "_"))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        self.functions[node.name.value] = node

    def leave_Module(self, original_node: cst.Module) -> None:  # noqa: N802
        self.found.update(f"{parsed}.{option}" for parsed in self.parsed for option in self.options)
        for name in self.spawned:
            function = self.functions.get(name)
            if function is not None and function.params.params:
                self.found.add(function.params.params[0].name.value)
