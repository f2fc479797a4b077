"""The layers of docs/ARCHITECTURE.md hold: the picture is read from the document, each package and
module of src/torchport stands in one of its layers, and every import (those inside functions too)
runs within a layer or down, never up; no modules import each other in a circle."""

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "torchport"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
_ENTRY = re.compile(r"(?<!\S)([a-z_]+/|[a-z_]+\.py)(?!\S)")


def layers(text: str) -> dict[str, int]:
    """Each package (`migrate`) and top module (`cli`) of the picture under "## The layers" -> its
    layer, 0 at the top; rows between two `|` lines are one layer."""
    picture = text.split("## The layers", 1)[1].split("```", 2)[1]
    found, layer = {}, 0
    for row in picture.splitlines():
        if row.strip() == "|":
            layer += 1
            continue
        for entry in _ENTRY.findall(row):
            found[entry.rstrip("/").removesuffix(".py")] = layer
    return found


def _modules() -> dict[str, Path]:
    """torchport's modules by dotted name (`torchport.migrate.engine`; a package by its own name)."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The torchport modules `path` imports, wherever in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
            found |= submodules  # (`from pkg import module` reads the module, the package only for other names)
            if len(submodules) < len(node.names):
                found.add(base)
    return {module for module in found if module in modules and module != name}


@lru_cache(maxsize=None)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _entry(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def upward_imports(graph: dict[str, set[str]], layer_of: dict[str, int]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, imported in graph.items() for b in imported
                  if _entry(a) and _entry(b) and layer_of[_entry(b)] < layer_of[_entry(a)])


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_each_package_and_module_stands_in_one_layer_of_the_picture():
    layer_of = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    entries = {_entry(module) for module in _modules()} - {""}
    assert sorted(entries - set(layer_of)) == [], "add it to the picture in docs/ARCHITECTURE.md"
    assert sorted(set(layer_of) - entries) == [], "the picture names what is no longer there"


def test_no_import_runs_up_a_layer():
    assert upward_imports(_graph(), layers(ARCHITECTURE.read_text(encoding="utf-8"))) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(_graph()) == []


def test_the_checks_find_an_import_up_and_a_circle():
    layer_of = layers("## The layers\n\n```\n  top/  cli.py   the top\n     |\n  low/   the floor\n```\n")
    assert layer_of == {"top": 0, "cli": 0, "low": 1}
    graph = {"torchport.low.a": {"torchport.top.b"}, "torchport.top.b": {"torchport.low.a"},
             "torchport.cli": {"torchport.low.a"}}
    assert upward_imports(graph, layer_of) == ["torchport.low.a -> torchport.top.b"]
    assert circles(graph) == [["torchport.low.a", "torchport.top.b"]]


def test_no_module_imports_the_cli():
    offenders = [name for name, imported in _graph().items()
                 if name not in ("torchport.cli", "torchport.__main__") and "torchport.cli" in imported]
    assert offenders == []


def test_report_imports_no_migrate_module():
    assert [(name, sorted(imported)) for name, imported in _graph().items() if _entry(name) == "report"
            and any(_entry(module) == "migrate" for module in imported)] == []
