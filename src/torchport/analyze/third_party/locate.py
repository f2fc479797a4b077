"""Where an installed library lives, and which ones a project imports, found without importing them."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from torchport.analyze.third_party.files import walk
from torchport.errors import UsageError
from torchport.pyast import parse_quietly

# Packages the project imports that are not third-party libraries to scan.
NOT_THIRD_PARTY = frozenset({"torch", "torchport"})


def locate_package(name: str) -> Path:
    """The folder of the installed package `name` (or its file, for a single module such as six.py),
    found as `import` would find it in this Python, without running any of its code. A dotted name
    (`torch.utils`) is looked up part by part, since `importlib.util.find_spec` would import the
    parents. A distribution name (`pytorch-lamb`) stands for the one package it installs."""
    roots = package_roots(name)
    if not roots:
        packages = _distribution_packages(name)
        if len(packages) > 1:
            raise UsageError(f"the distribution {name} installs several packages ({', '.join(packages)}): name one")
        roots = package_roots(packages[0]) if packages else []
    if not roots:
        raise UsageError(f"no installed package named {name} (is it installed in this Python?)")
    if len(roots) > 1:
        shown = ", ".join(str(r) for r in roots)
        raise UsageError(f"{name} is a namespace package spread over {len(roots)} folders ({shown}): "
                         "name one package inside it")
    return roots[0]


def package_roots(name: str) -> list[Path]:
    """Where `name` lives: one folder or file, or several folders for a namespace package; [] if
    it is not installed. Only finders run (sys.meta_path for the first part, PathFinder below it)."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return []
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):  # ValueError: in sys.modules without a __spec__
        return []
    for depth in range(2, len(parts) + 1):
        if spec is None or not spec.submodule_search_locations:
            return []
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]), list(spec.submodule_search_locations))
    if spec is None:
        return []
    if spec.submodule_search_locations is not None:  # a package, regular or namespace
        return [Path(location) for location in spec.submodule_search_locations]
    if not spec.has_location or not spec.origin:
        raise UsageError(f"{name} is built into Python: it has no source to scan")
    return [Path(spec.origin)]


def _distribution_packages(name: str) -> list[str]:
    """The import names the distribution `name` installs (its top_level.txt, else its files)."""
    try:
        distribution = importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    listed = distribution.read_text("top_level.txt")
    if listed:
        return sorted(set(listed.split()))
    tops = {f.parts[0].removesuffix(".py") for f in distribution.files or () if f.suffix == ".py"}
    return sorted(t for t in tops if t.isidentifier())


def imported_folders(script_or_src: Path) -> list[Path]:
    """The installed libraries that a script, or the files of a source tree, import: what
    `analyze --mode third-party SRC` scans when no --package is given (label each with `.name`,
    or `.stem` for a single-module library).

    A library here is the first part of an absolute import (`import timm.layers` -> timm) that
    this Python finds (as `locate_package` does, without importing it) and that is none of:
    the standard library, torch itself, torchport, or a module of the project's own (a .py file
    or folder of that name inside the tree, or beside the script: the script's folder is on
    sys.path when it runs). Relative imports are the project's own. Imports that this Python
    cannot find are left out: they are not installed here, so there is nothing to scan.
    A namespace package contributes each of its folders."""
    tree = Path(script_or_src)
    files = [tree] if tree.is_file() else list(walk(tree, (".py",)))
    imported: set[str] = set()
    for path in files:
        imported |= _absolute_imports(path)
    own = own_modules(tree, files)
    libraries = []
    for name in sorted(imported - own - NOT_THIRD_PARTY):
        if name in sys.stdlib_module_names or name in sys.builtin_module_names:
            continue
        try:
            libraries += package_roots(name)
        except UsageError:  # built in: nothing to scan
            continue
    return libraries


def _absolute_imports(path: Path) -> set[str]:
    """The first parts of the absolute imports in one file (none if it cannot be read or parsed)."""
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    if b"import" not in data:
        return set()
    tree = parse_quietly(data, str(path))
    if tree is None:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def own_modules(tree: Path, files: list[Path]) -> set[str]:
    """The names a project's own modules and packages go by: the files and folders of the tree
    (the tree itself too), or those beside a single script."""
    if tree.is_file():
        beside = tree.parent.iterdir()
        return {p.stem for p in beside if p.suffix == ".py" or p.is_dir()}
    names = {tree.resolve().name}
    for path in files:
        relative = path.relative_to(tree)
        names.add(relative.stem)
        names.update(relative.parts[:-1])
    return names


def own_folders(tree: Path, files: list[Path]) -> dict[str, set[Path]]:
    """Each name of `own_modules(tree, files)` (a folder tree) with the folders, relative to the
    tree, that hold a module or package of that name."""
    places: dict[str, set[Path]] = {}
    for path in files:
        relative = path.relative_to(tree)
        places.setdefault(relative.stem, set()).add(relative.parent)
        for depth, part in enumerate(relative.parts[:-1]):
            places.setdefault(part, set()).add(Path(*relative.parts[:depth]) if depth else Path("."))
    return places


def search_folders(tree: Path, relative: Path) -> set[Path]:
    """Where an absolute import in the tree's file `relative` finds the project's modules: the
    file's own folder (sys.path[0] when it runs as a script), the tree's root, and the folder its
    package chain starts from (where `python -m package.module` runs)."""
    folders = {relative.parent, Path(".")}
    start = relative.parent
    while start != Path(".") and (tree / start / "__init__.py").is_file():
        start = start.parent
    folders.add(start)
    return folders

