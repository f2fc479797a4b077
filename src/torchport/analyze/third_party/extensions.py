"""The CUDA extensions a project builds itself: `CUDAExtension(...)` in its setup.py,
`torch.utils.cpp_extension.load(...)` of CUDA sources, a compiled library beside CUDA sources.

An import of one of these is compiled CUDA code: neither migrate (which rewrites Python) nor run
(which patches torch's Python API) can reach it, whether it is built yet or not.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from torchport.analyze.third_party.cuda_uses import BUILDS_AT_RUN_TIME, DECLARES_CUDA, builds_cuda
from torchport.analyze.third_party.files import KERNEL_SOURCES, is_compiled_cuda, walk
from torchport.analyze.third_party.names import aliases
from torchport.pyast import dotted_name

# How CUDA extensions are named by convention (mish_cuda, deform_conv_cuda, opticalFlow_cuda_ext).
CUDA_EXTENSION_NAME = re.compile(r"\w+_cuda(_ext)?")

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Build:
    file: str  # as the reports show it
    line: int  # 0: a compiled library (the whole file)
    name: str | None  # the module it builds ("retinanet._C"); None where the code computes the name
    how: str  # "CUDAExtension", "cpp_extension.load", "compiled"

    def makes(self, module: str) -> bool:
        """Whether importing `module` loads what this builds; either name may be the other's tail
        (the project may be read from above or below its package)."""
        if self.name is None:
            return False
        return module == self.name or module.endswith(f".{self.name}") or self.name.endswith(f".{module}")


def named_as_extension(module: str, own: set[str]) -> bool:
    """Whether a part of `module` bears a CUDA extension's name and is no module of the project's."""
    return any(CUDA_EXTENSION_NAME.fullmatch(part) and part not in own for part in module.split("."))


def builds_in(tree: ast.Module, shown: str, package: list[str]) -> list[Build]:
    """The CUDA extensions one parsed file builds: each `CUDAExtension(...)`, and each
    `cpp_extension.load`/`load_inline` call that visibly compiles CUDA."""
    names = _all_aliases(tree, package)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = _qualified(dotted_name(node.func), names)
        if callee in DECLARES_CUDA:
            found.append(Build(shown, node.lineno, _built_name(node), "CUDAExtension"))
        elif callee in BUILDS_AT_RUN_TIME and builds_cuda(node):
            found.append(Build(shown, node.lineno, _built_name(node), f"cpp_extension.{callee.rpartition('.')[2]}"))
    return found


def compiled_build(path: Path, shown: str, module: str) -> Build | None:
    """A native library of the project that is compiled CUDA: it holds CUDA code, or CUDA sources
    lie in its folder or below it (an extension built in place)."""
    if is_compiled_cuda(path) or next(walk(path.parent, KERNEL_SOURCES), None) is not None:
        return Build(shown, 0, module, "compiled")
    return None


def _all_aliases(tree: ast.Module, package: list[str]) -> dict[str, str]:
    """The imported names of the module and of every function and class in it, in one map (a
    setup.py often imports cpp_extension inside the function that lists its extensions), and
    the names given CUDAExtension itself (`extension = CUDAExtension` where CUDA is found)."""
    found = aliases(tree.body, package)
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES):
            for name, target in aliases(node.body, package).items():
                found.setdefault(name, target)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _qualified(dotted_name(node.value), found)
            if value in DECLARES_CUDA:
                found[node.targets[0].id] = value
    return found


def _qualified(dotted: str | None, names: dict[str, str]) -> str | None:
    if dotted is None:
        return None
    first, _, rest = dotted.partition(".")
    target = names.get(first, "torch" if first == "torch" else None)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _built_name(call: ast.Call) -> str | None:
    """The extension's module name: the first argument or `name=`, where it is written as a string."""
    value = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
        return value.value
    return None
