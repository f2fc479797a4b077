"""Generate the API surfaces that `torchport.targets` reads, from the real packages.

    python tools/gen_surface.py torch                # needs torch 2.13 importable
    python tools/gen_surface.py npu [WHEEL]          # downloads torch-npu==2.14.0 when WHEEL is omitted

The torch surface is read by importing torch's own device modules. The torch_npu surface is read
*statically* from the wheel's Python files (torch_npu cannot be imported without the CANN runtime,
and we never want to execute it): for each recorded module, its `__all__`, its top-level (and
annotated) definitions, its re-exports and its submodules (see `_Wheel`), under "modules", and its
raw `__all__` under "all". torch.npu and torch.npu.amp are torch_npu.npu and torch_npu.npu.amp.
Each JSON file records the package version and how it was made; commit the result.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "src" / "torchport" / "targets" / "data"
sys.path.insert(0, str(ROOT / "src"))  # (torchport's own knowledge, whether or not it is installed)

from torchport.apis.amp import TORCH_AMP  # noqa: E402
from torchport.apis.cuda_module import MODULES, kind  # noqa: E402

# What CUDA code uses (what is migrated from), and torch.amp, which every target's AMP goes through.
CUDA_MODULES = [*MODULES, TORCH_AMP]


def torch_modules() -> list[str]:
    """CUDA_MODULES, and the device module of each of torchport's targets that torch itself has (one
    that needs no setup import: torch_npu's torch.npu is read from its wheel). The targets read the
    data committed now: generate a new torch's file before pointing TORCH_SURFACE at it."""
    from torchport import targets

    own = [target for name, target in targets.all_targets().items() if targets.origin(name) is None]
    return CUDA_MODULES + [target.device_module for target in own if target.setup_import is None]


# torch_npu module name -> the path of its source inside the wheel. Each public submodule of
# torch_npu.npu is recorded as well (found in the wheel, see `npu_surface`).
NPU_MODULES = {
    "torch_npu": "torch_npu/__init__.py",
    "torch_npu.npu": "torch_npu/npu/__init__.py",
    "torch_npu.npu.amp": "torch_npu/npu/amp/__init__.py",
    "torch_npu.optim": "torch_npu/optim/__init__.py",
    "torch_npu.contrib": "torch_npu/contrib/__init__.py",
    "torch_npu.profiler": "torch_npu/profiler/__init__.py",
}
NPU_SUBMODULES_OF = "torch_npu.npu"
# torch_npu registers torch_npu.npu as torch.npu at import time (torch._register_device_module), so
# torch.npu.X is torch_npu.npu.X.
NPU_ALIASES = {"torch.npu": "torch_npu.npu", "torch.npu.amp": "torch_npu.npu.amp"}
NPU_VERSION = "2.14.0"


def _params(obj: object) -> list[str] | None:
    try:
        return list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None


def torch_surface() -> dict:
    import torch

    modules = {}
    for name in torch_modules():
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        entries = {}
        for attr in sorted(set(public)):
            obj = getattr(module, attr, None)
            entry = {"kind": kind(obj)}
            if entry["kind"] in ("function", "class"):
                params = _params(obj)
                if params is not None:
                    entry["params"] = params
            entries[attr] = entry
        modules[name] = entries
    return {
        "package": "torch",
        "version": torch.__version__.split("+")[0],
        "generated_by": "tools/gen_surface.py torch",
        "modules": modules,
    }


class _Wheel:
    """The Python modules of a torch_npu wheel, read as text and parsed, never imported.

    For each module it answers what `import` would bind as its attributes:
      - the names in `__all__`, however it is built (a literal, `+=`, `.extend`, `.append`,
        concatenation, another module's `__all__`, `pkgutil.iter_modules` of the package);
      - top-level `def`/`class`, assignments and annotated assignments with a value (`x: T = v`),
        also inside top-level `if`/`try` blocks (not `if TYPE_CHECKING:`), less what is `del`eted;
      - re-exports: `from .x import y`, `from torch_npu.x import y`, `from .x import *` (resolved
        against x's own `__all__` or surface), and `import a.b as y`;
      - submodules: every public module file or package directory below a package (importing the
        package's submodule binds it as an attribute; all are importable by name).
    Plain `import os` / `from typing import Tuple` bindings are not API and are not recorded unless
    `__all__` names them.
    """

    def __init__(self, archive: zipfile.ZipFile, root: str = "torch_npu"):
        self.root = root
        self.files = {n for n in archive.namelist() if n.startswith(root + "/")}
        self.sources = {
            n: archive.read(n).decode("utf-8-sig") for n in self.files if n.endswith(".py")
        }
        self._done: dict[str, tuple[dict[str, dict], list[str] | None]] = {}
        self._busy: set[str] = set()

    # -- where modules are -------------------------------------------------------------------
    def source_path(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for path in (f"{base}/__init__.py", f"{base}.py"):
            if path in self.sources:
                return path
        return None

    def is_package(self, module: str) -> bool:
        base = module.replace(".", "/") + "/"
        return any(f.startswith(base) and f.endswith(".py") for f in self.sources)

    def is_module(self, module: str) -> bool:
        if module != self.root and not module.startswith(self.root + "."):
            return False
        if self.source_path(module) or self.is_package(module):
            return True
        base = module.replace(".", "/")
        return any(f.startswith(base + ".") and f.endswith(".so") and "/" not in f[len(base):] for f in self.files)

    def submodules(self, module: str) -> list[str]:
        """Public modules directly below package `module`: x.py, x/ with Python files, x.*.so."""
        prefix = module.replace(".", "/") + "/"
        if not self.is_package(module):
            return []
        found = set()
        for f in self.files:
            if not f.startswith(prefix):
                continue
            rest = f[len(prefix):]
            head = rest.split("/", 1)[0]
            if "/" in rest:
                if any(g.startswith(prefix + head + "/") for g in self.sources):
                    found.add(head)
            elif rest.endswith(".py"):
                found.add(rest[:-3])
            elif rest.endswith(".so"):
                found.add(rest.split(".", 1)[0])
        return sorted(n for n in found if n.isidentifier() and not n.startswith("_"))

    def _package_of(self, module: str) -> str:
        path = self.source_path(module)
        if path is None or path.endswith("/__init__.py"):
            return module
        return module.rsplit(".", 1)[0]

    def _resolve(self, module: str, level: int, name: str | None) -> str:
        if level == 0:
            return name or ""
        base = self._package_of(module).split(".")
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    # -- what modules bind -------------------------------------------------------------------
    def names(self, module: str) -> tuple[dict[str, dict], list[str] | None]:
        """(public names -> entry, the raw `__all__` or None) of `module`."""
        if module in self._done:
            return self._done[module]
        if module in self._busy:  # an import cycle: what is known so far is all we can say
            return {}, None
        self._busy.add(module)
        try:
            result = self._read(module)
        finally:
            self._busy.discard(module)
        self._done[module] = result
        return result

    def exports(self, module: str) -> dict[str, dict]:
        """What `from module import *` binds: `__all__` if it has one, else its public names."""
        names, exported = self.names(module)
        if exported is None:
            return names
        return {n: names.get(n, {"kind": "exported"}) for n in exported}

    def _read(self, module: str) -> tuple[dict[str, dict], list[str] | None]:
        path = self.source_path(module)
        bound: dict[str, dict] = {}  # every binding, API or not, last one wins
        api: set[str] = set()  # the bindings that are part of the module's API
        modules: dict[str, str] = {}  # local name -> the module it is bound to
        exported: list[str] | None = None
        imported: set[str] = set()  # submodules of this package imported so far

        def bind(name: str, entry: dict, is_api: bool = True) -> None:
            bound[name] = entry
            if is_api:
                api.add(name)
            else:
                api.discard(name)

        def all_value(node: ast.expr) -> list[str]:
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                return all_value(node.left) + all_value(node.right)
            if isinstance(node, ast.Name) and node.id == "__all__":
                return list(exported or [])
            if isinstance(node, ast.Attribute) and node.attr == "__all__":
                target = modules.get(ast.unparse(node.value))
                if target:
                    return list(self.names(target)[1] or [])
            if isinstance(node, ast.Call):
                if "iter_modules" in ast.unparse(node.func) or any(
                    "iter_modules" in ast.unparse(a) for a in node.args
                ):
                    return self.submodules(module)
                if getattr(node.func, "id", None) in ("list", "tuple", "sorted") and node.args:
                    return all_value(node.args[0])
            return []

        def visit(body: list[ast.stmt]) -> None:
            nonlocal exported
            for stmt in body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    if stmt.value is None:  # `x: int` binds nothing
                        continue
                    for target in targets:
                        for node in ast.walk(target) if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                            if not isinstance(node, ast.Name):
                                continue
                            if node.id == "__all__":
                                exported = all_value(stmt.value)
                            else:
                                bind(node.id, {"kind": "value"})
                elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id == "__all__":
                        exported = (exported or []) + all_value(stmt.value)
                elif (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Attribute)
                    and getattr(stmt.value.func.value, "id", None) == "__all__"
                    and stmt.value.args
                ):
                    if stmt.value.func.attr == "extend":
                        exported = (exported or []) + all_value(stmt.value.args[0])
                    elif stmt.value.func.attr == "append":
                        exported = (exported or []) + all_value(ast.List(elts=[stmt.value.args[0]]))
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = stmt.args
                    bind(stmt.name, {"kind": "function", "params": [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]})
                elif isinstance(stmt, ast.ClassDef):
                    bind(stmt.name, {"kind": "class"})
                elif isinstance(stmt, ast.Import):
                    for alias in stmt.names:
                        if alias.asname:  # `import a.b as y` binds the module a.b
                            bind(alias.asname, {"kind": "module"})
                            modules[alias.asname] = alias.name
                        else:  # `import os`, `import torch_npu.x`: binds the top package, not API
                            top = alias.name.split(".")[0]
                            bind(top, {"kind": "module"}, is_api=False)
                            modules[top] = top
                elif isinstance(stmt, ast.ImportFrom):
                    source = self._resolve(module, stmt.level, stmt.module)
                    internal = source == self.root or source.startswith(self.root + ".")
                    # `from torch_npu._compat.x import helper` is an implementation import; a star
                    # import, a relative import or one from a public module is a re-export.
                    public = internal and (stmt.level > 0 or not any(
                        part.startswith("_") for part in source.split(".")[1:]
                    ))
                    if source.startswith(module + ".") and self.is_package(module):
                        # `from .x import y` in a package's __init__ first imports the submodule x,
                        # which binds x in the package (then `y` is bound, and may rebind x).
                        sub = source[len(module) + 1:].split(".")[0]
                        if sub not in imported:
                            imported.add(sub)
                            bind(sub, {"kind": "module"})
                            modules[sub] = f"{module}.{sub}"
                    for alias in stmt.names:
                        if alias.name == "*":
                            if internal:
                                for name, entry in self.exports(source).items():
                                    bind(name, {"kind": "module"} if entry.get("kind") == "module" else {"kind": "reexported"})
                            continue
                        name = alias.asname or alias.name
                        # `from .function import roll` is the submodule roll unless function's
                        # __init__ rebinds roll (`from .roll import roll`): then it is that object.
                        rebound = self.names(source)[0].get(alias.name, {}).get("kind", "module") if internal else "module"
                        if self.is_module(f"{source}.{alias.name}") and rebound == "module":
                            bind(name, {"kind": "module"}, is_api=public)
                            modules[name] = f"{source}.{alias.name}"
                        else:
                            bind(name, {"kind": "reexported"}, is_api=public)
                elif isinstance(stmt, ast.Delete):
                    for target in stmt.targets:
                        if isinstance(target, ast.Name):
                            bound.pop(target.id, None)
                            api.discard(target.id)
                elif isinstance(stmt, ast.If):
                    if "TYPE_CHECKING" not in ast.unparse(stmt.test):
                        visit(stmt.body)
                    visit(stmt.orelse)
                elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                    visit(stmt.body)
                    for handler in stmt.handlers:
                        visit(handler.body)
                    visit(stmt.orelse)
                    visit(stmt.finalbody)
                elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                    visit(stmt.body)

        if path is not None:
            visit(ast.parse(self.sources[path]).body)
        names: dict[str, dict] = {}
        for name in exported or []:
            names[name] = bound.get(name, {"kind": "exported"})
        for name in api:
            if not name.startswith("_"):
                names.setdefault(name, bound[name])
        for name in self.submodules(module):
            names.setdefault(name, {"kind": "module"})
        return dict(sorted(names.items())), exported


def npu_surface(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as archive:
        reader = _Wheel(archive)
    recorded = dict.fromkeys(NPU_MODULES)
    for sub in reader.submodules(NPU_SUBMODULES_OF):
        if reader.source_path(f"{NPU_SUBMODULES_OF}.{sub}"):
            recorded.setdefault(f"{NPU_SUBMODULES_OF}.{sub}")
    for module, path in NPU_MODULES.items():
        assert reader.source_path(module) == path, (module, path)
    modules, exported = {}, {}
    for module in recorded:
        modules[module], all_names = reader.names(module)
        if all_names is not None:
            exported[module] = all_names
    for alias, module in NPU_ALIASES.items():
        modules[alias] = modules[module]
        if module in exported:
            exported[alias] = exported[module]
    return {
        "package": "torch-npu",
        "version": NPU_VERSION,
        "wheel": wheel.name,
        "generated_by": "tools/gen_surface.py npu (static read of the wheel, never imported)",
        "modules": modules,
        # each module's own `__all__`, as written (tests check it is part of the surface)
        "all": exported,
    }


def _download_npu_wheel(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"torch-npu=={NPU_VERSION}", "-d", str(into)],
        check=True,
    )
    return next(into.glob("torch_npu-*.whl"))


def write(surface: dict) -> Path:
    out = DATA_DIR / f"{surface['package'].replace('-', '_')}-{surface['version']}.json"
    out.write_text(json.dumps(surface, indent=1, sort_keys=True) + "\n")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=["torch", "npu"])
    parser.add_argument("wheel", nargs="?", type=Path, help="a torch_npu wheel already on disk")
    args = parser.parse_args()
    if args.which == "torch":
        path = write(torch_surface())
    elif args.wheel:
        path = write(npu_surface(args.wheel))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = write(npu_surface(_download_npu_wheel(Path(tmp))))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
