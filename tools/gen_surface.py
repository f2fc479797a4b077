"""Generate the API surfaces that `torchport.targets` reads, from the real packages.

    python tools/gen_surface.py torch                # needs torch 2.13 importable
    python tools/gen_surface.py npu [WHEEL]          # downloads torch-npu==2.14.0 when WHEEL is omitted

The torch surface is read by importing torch's own device modules. The torch_npu surface is read
*statically* from the wheel's Python files (torch_npu cannot be imported without the CANN runtime,
and we never want to execute it): each module's `__all__` plus the names it defines at top level.
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

DATA_DIR = Path(__file__).resolve().parent.parent / "src" / "torchport" / "targets" / "data"

TORCH_MODULES = [
    "torch.cuda",
    "torch.cuda.amp",
    "torch.amp",
    "torch.xpu",
    "torch.mps",
    "torch.cpu",
    "torch.accelerator",
]

# torch_npu module name -> the path of its source inside the wheel.
NPU_MODULES = {
    "torch_npu": "torch_npu/__init__.py",
    "torch_npu.npu": "torch_npu/npu/__init__.py",
    "torch_npu.npu.amp": "torch_npu/npu/amp/__init__.py",
    "torch_npu.optim": "torch_npu/optim/__init__.py",
    "torch_npu.contrib": "torch_npu/contrib/__init__.py",
    "torch_npu.profiler": "torch_npu/profiler/__init__.py",
}
NPU_VERSION = "2.14.0"


def _kind(obj: object) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "value"


def _params(obj: object) -> list[str] | None:
    try:
        return list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None


def torch_surface() -> dict:
    import torch

    modules = {}
    for name in TORCH_MODULES:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        entries = {}
        for attr in sorted(set(public)):
            obj = getattr(module, attr, None)
            entry = {"kind": _kind(obj)}
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


def _literal_names(node: ast.expr) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _static_module_names(source: str) -> dict[str, dict]:
    """`__all__` entries and top-level definitions of a module, without running it."""
    tree = ast.parse(source)
    exported: list[str] = []
    defined: dict[str, dict] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__":
                        exported = _literal_names(stmt.value)
                    else:
                        defined[target.id] = {"kind": "value"}
        elif isinstance(stmt, ast.AugAssign) and getattr(stmt.target, "id", None) == "__all__":
            exported += _literal_names(stmt.value)
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and getattr(stmt.value.func.value, "id", None) == "__all__"
            and stmt.value.func.attr == "extend"
            and stmt.value.args
        ):
            exported += _literal_names(stmt.value.args[0])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[stmt.name] = {"kind": "function", "params": [a.arg for a in stmt.args.posonlyargs + stmt.args.args + stmt.args.kwonlyargs]}
        elif isinstance(stmt, ast.ClassDef):
            defined[stmt.name] = {"kind": "class"}
        elif isinstance(stmt, ast.ImportFrom) and stmt.level > 0:
            # `from . import amp` / `from .memory import empty_cache`: part of this package's API.
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "*":
                    defined.setdefault(name, {"kind": "reexported"})
    names = {n: defined.get(n, {"kind": "exported"}) for n in exported}
    for name, entry in defined.items():
        if not name.startswith("_"):
            names.setdefault(name, entry)
    return dict(sorted(names.items()))


def npu_surface(wheel: Path) -> dict:
    modules = {}
    with zipfile.ZipFile(wheel) as archive:
        for module, path in NPU_MODULES.items():
            modules[module] = _static_module_names(archive.read(path).decode("utf-8"))
    # torch_npu registers torch_npu.npu as torch.npu at import time (torch._register_device_module).
    modules["torch.npu"] = modules["torch_npu.npu"]
    modules["torch.npu.amp"] = modules["torch_npu.npu.amp"]
    return {
        "package": "torch-npu",
        "version": NPU_VERSION,
        "wheel": wheel.name,
        "generated_by": "tools/gen_surface.py npu (static read of the wheel, never imported)",
        "modules": modules,
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
