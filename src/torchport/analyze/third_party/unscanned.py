"""What `analyze --mode third-party` could not scan: the imports of a project that are not
installed here (with the distribution to install, where it is known), and the CUDA extensions
(compiled CUDA code, which no scan, no rewrite and no patch reaches), each at the line that
imports it; optional imports (inside try/except ImportError) are listed too, marked so.

The project's own modules and the standard library are neither: only what a user can install,
or must port. An installed library is not listed here: its scan is full_unsupported_results.csv.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from torchport.analyze.third_party.cuda_uses import CUDA_ONLY_LIBRARIES
from torchport.analyze.third_party.distributions import distribution_of
from torchport.analyze.third_party.extensions import builds_in, compiled_build, named_as_extension
from torchport.analyze.third_party.files import COMPILED_LIBRARIES, walk
from torchport.analyze.third_party.imports import ImportSite, import_sites
from torchport.analyze.third_party.locate import NOT_THIRD_PARTY, own_folders, own_modules, package_roots, search_folders
from torchport.apis.apex import APEX
from torchport.apis.kernels_llm import STAND_INS, no_stand_in_advice
from torchport.errors import UsageError
from torchport.pyast import parse_quietly
from torchport.report.csv_table import write_table

# Kinds, as the summary groups them.
CUDA_EXTENSION = "CUDA extension"
CUDA_LIBRARY = "CUDA-only library"
NOT_INSTALLED = "not installed"
_PLURALS = {CUDA_EXTENSION: "CUDA extensions", CUDA_LIBRARY: "CUDA-only libraries", NOT_INSTALLED: NOT_INSTALLED}

_UNREACHABLE = "compiled CUDA code, which neither migrate nor run can reach"
PORT = ("port it: an implementation of its ops for the target (an NPU or CPU kernel), or a pure-torch "
        "fallback that the code uses where the extension cannot be imported")
PORT_LIBRARY = "another implementation of this path for the target: neither migrate nor run can move it"
INSTALL = "pip install {distribution}, then analyze again: what it does with CUDA is unknown until then"
INSTALL_UNNAMED = ("install the package that provides {module}, then analyze again: what it does with CUDA "
                   "is unknown until then")
APEX_NOTE = ("nothing to install: torchport reads apex itself (analyze --mode apis lists each use in "
             "apex_api.csv, migrate rewrites them, run serves a stand-in package)")
OPTIONAL = "optional: imported inside try/except ImportError"
KERNEL_PACKAGE = "a CUDA-only kernel package (a CUDA build, for no other device), not installed"
STAND_IN = ("nothing to install (it exists for CUDA only): migrate imports torchport's stand-in instead "
            "(TP029, on torch) and run serves it")
NO_STAND_IN = "nothing to install (it exists for CUDA only): {advice}"

# What a file's text says about its imports, read before (and mostly instead of) parsing it.
_FROM = re.compile(rb"\bfrom[ \t]+([\w.]+)[ \t]+import\b")
_IMPORT = re.compile(rb"(?:^|[;:])[ \t]*import[ \t]+([^\n;#]*)", re.MULTILINE)
_IMPORT_WORD = re.compile(rb"\bimport\b")
_EXTENSION_NAME = re.compile(rb"\w_cuda(?:_ext)?\b")


@dataclass(frozen=True)
class Unscanned:
    file: str
    line: int
    module: str  # what is imported or built: "cv2", "mish_cuda", "retinanet._C"
    kind: str  # CUDA_EXTENSION, CUDA_LIBRARY, NOT_INSTALLED
    what: str
    action: str
    optional: bool = False


def not_scanned(root: Path, prefix: Path = Path("."), files: Iterable[Path] | None = None) -> list[Unscanned]:
    """Every import of the project at `root` (a folder, or one script) that could not be
    scanned, and every CUDA extension it builds, sorted by file and line. `files`: the paths
    (relative to the folder) to read, as the other reports chose them; default: all of them.
    A row's file is shown as `prefix/<path>`, as the other reports show it."""
    root = Path(root)
    base = root if root.is_dir() else root.parent
    chosen = [Path(root.name)] if root.is_file() else sorted(files if files is not None else _all(root))
    project = _Project(root, base, prefix, chosen)
    rows = list(project.build_rows())
    for relative in chosen:
        if relative.suffix == ".py":
            rows += project.import_rows(relative)
    return sorted(rows, key=lambda r: (r.file, r.line, r.module))


def write_not_scanned_csv(path: Path, columns: list[str], rows: Iterable[Unscanned]) -> None:
    write_table(path, columns, ([r.file, r.line, r.module, r.what, r.action] for r in rows))


def summary(rows: list[Unscanned]) -> str:
    """"2 CUDA extensions, 3 not installed": the modules of each kind, each counted once."""
    kinds = Counter(row.kind for row in firsts(rows))
    return ", ".join(f"{kinds[kind]} {kind if kinds[kind] == 1 else _PLURALS[kind]}"
                     for kind in _PLURALS if kinds[kind])


def firsts(rows: list[Unscanned]) -> list[Unscanned]:
    """Each module's first row, CUDA extensions first, then CUDA-only libraries, then the rest."""
    first: dict[str, Unscanned] = {}
    for row in rows:
        first.setdefault(row.module, row)
    order = list(_PLURALS)
    return sorted(first.values(), key=lambda r: (order.index(r.kind), r.file, r.line))


def brief(row: Unscanned) -> str:
    """A row in a few words, for the terminal: "not installed (pip install opencv-python)"."""
    if row.kind == NOT_INSTALLED:
        distribution = distribution_of(row.module) if row.module != APEX else None
        said = f"not installed (pip install {distribution})" if distribution else "not installed"
        if row.module == APEX:
            said += ": torchport reads apex itself"
    elif row.kind == CUDA_EXTENSION:
        said = "a CUDA extension: port it (an NPU or CPU implementation, or a pure-torch fallback)"
    elif row.action == STAND_IN:
        said = "a CUDA-only kernel package: torchport's stand-in (migrate TP029, run)"
    elif row.what.startswith(KERNEL_PACKAGE):
        said = f"a CUDA-only kernel package: {row.action.split(': ', 1)[-1]}"
    else:
        said = "a CUDA-only library, not installed: needs another implementation"
    return f"{said}, optional" if row.optional else said


def _all(root: Path) -> list[Path]:
    return [p.relative_to(root) for p in walk(root, (".py", *COMPILED_LIBRARIES))]


class _Project:
    """The project's own names and CUDA builds, and the rows of each of its files."""

    def __init__(self, root: Path, base: Path, prefix: Path, files: list[Path]) -> None:
        self.base, self.prefix = base, prefix
        # the folder's own name leads its modules when it is a package (`from . import _C` in its __init__)
        self.lead = [root.name] if root.is_dir() and (root / "__init__.py").is_file() else []
        python = [base / f for f in files if f.suffix == ".py"] if root.is_file() else list(walk(root, (".py",)))
        self.own = own_modules(root, python)
        self.own_folders = own_folders(root, python) if root.is_dir() else {}
        self.module_files = {p.stem for p in python if p.name != "__init__.py"}
        self.texts = {f: _read(base / f) for f in files if f.suffix == ".py"}
        self.trees: dict[Path, ast.Module] = {}
        self.installed: dict[str, bool] = {}
        self.builds = [build for f, text in self.texts.items() if b"cpp_extension" in text
                       for build in builds_in(self.tree(f), self.shown(f), self.package(f))]
        self.builds += [b for f in files if f.suffix in COMPILED_LIBRARIES
                        if (b := compiled_build(base / f, self.shown(f), self._native_module(f)))]
        self.built_names = [b.name.rpartition(".")[2].encode() for b in self.builds if b.name]

    def tree(self, relative: Path) -> ast.Module:
        """A file parsed (once); an empty module where Python cannot read it."""
        if relative not in self.trees:
            tree = parse_quietly(self.texts[relative], str(self.base / relative))
            self.trees[relative] = tree or ast.Module(body=[], type_ignores=[])
        return self.trees[relative]

    def is_own(self, top: str, relative: Path) -> bool:
        """Whether `top`, imported in the file `relative`, is the project's own module. A CUDA-only
        kernel package's name (mamba's `ops/triton/` folder beside `import triton`) is the
        project's only where Python would find that folder from the file."""
        if top not in self.own:
            return False
        if top not in self.own_folders or (top not in STAND_INS and no_stand_in_advice(top) is None):
            return True
        return bool(self.own_folders[top] & search_folders(self.base, relative))

    def worth_reading(self, text: bytes, relative: Path) -> bool:
        """Whether a file may hold a row: an import that is not installed, or one that may load a
        CUDA extension; decided from its text, so that most files are never parsed."""
        if _EXTENSION_NAME.search(text) or any(name in text for name in self.built_names):
            return True
        tops = _absolute_tops(text)
        if tops is None:
            return True
        return any(_third_party(top) and not self.is_own(top, relative) and not self.is_installed(top) for top in tops)

    def is_installed(self, top: str) -> bool:
        if top not in self.installed:
            self.installed[top] = _installed(top)
        return self.installed[top]

    def shown(self, relative: Path) -> str:
        return (self.prefix / relative).as_posix()

    def package(self, relative: Path) -> list[str]:
        """The package a file's relative imports start from (an __init__.py's is its own folder)."""
        return [*self.lead, *relative.parent.parts]

    def _native_module(self, relative: Path) -> str:
        """`pkg/_C.cpython-311-x86_64-linux-gnu.so` -> "pkg._C"."""
        return ".".join([*self.lead, *relative.parent.parts, relative.name.partition(".")[0]])

    def build_rows(self) -> Iterable[Unscanned]:
        for build in self.builds:
            name = build.name or f"{build.how}(...)"
            if build.how == "compiled":
                what = f"a compiled CUDA extension in the project: {_UNREACHABLE}"
            else:
                what = f"builds a CUDA extension from CUDA sources ({build.how}): {_UNREACHABLE}"
            yield Unscanned(build.file, build.line, name, CUDA_EXTENSION, what, PORT)

    def import_rows(self, relative: Path) -> list[Unscanned]:
        if not self.worth_reading(self.texts[relative], relative):
            return []
        rows = []
        for site in import_sites(self.tree(relative), self.package(relative)):
            row = self.classify(site, self.shown(relative), relative)
            if row is not None:
                rows.append(row)
        return rows

    def classify(self, site: ImportSite, shown: str, relative: Path) -> Unscanned | None:
        candidates = self.candidates(site)
        build = next((b for c in candidates for b in self.builds if b.makes(c)), None)
        if build is not None:
            where = f"{build.file}:{build.line}" if build.line else build.file
            return self.row(site, shown, build.name or site.module, CUDA_EXTENSION,
                            f"a CUDA extension, built by {where} ({build.how}): {_UNREACHABLE}", PORT)
        named = next((c for c in candidates if named_as_extension(c, self.own)), None)
        if site.relative or self.is_own(site.top, relative):
            if named is None:
                return None  # the project's own module
            what = f"a CUDA extension by its name (no Python module of the project has it): {_UNREACHABLE}"
            return self.row(site, shown, named, CUDA_EXTENSION, what, PORT)
        if not _third_party(site.top) or self.is_installed(site.top):
            return None
        if named is not None:
            return self.row(site, shown, named, CUDA_EXTENSION,
                            f"a CUDA extension by its name, not installed: {_UNREACHABLE}", PORT)
        library = next((lib for c in candidates for lib in CUDA_ONLY_LIBRARIES
                        if c == lib or c.startswith(f"{lib}.")), None)
        if library is not None:
            return self.row(site, shown, library, CUDA_LIBRARY, "a CUDA-only library, not installed", PORT_LIBRARY)
        if site.top == APEX:
            return self.row(site, shown, APEX, NOT_INSTALLED, "NVIDIA apex, not installed", APEX_NOTE)
        if site.top in STAND_INS:
            return self.row(site, shown, site.top, CUDA_LIBRARY, KERNEL_PACKAGE, STAND_IN)
        advice = next((a for c in candidates if (a := no_stand_in_advice(c))), None)
        if advice is not None:
            return self.row(site, shown, site.top, CUDA_LIBRARY, KERNEL_PACKAGE, NO_STAND_IN.format(advice=advice))
        distribution = distribution_of(site.top)
        action = (INSTALL.format(distribution=distribution) if distribution
                  else INSTALL_UNNAMED.format(module=site.top))
        return self.row(site, shown, site.top, NOT_INSTALLED, "not installed here: not scanned", action)

    def candidates(self, site: ImportSite) -> list[str]:
        """The modules an import may load; names taken from a module file are its attributes."""
        if site.names and site.module.rpartition(".")[2] in self.module_files:
            return [site.module]
        return site.candidates()

    @staticmethod
    def row(site: ImportSite, shown: str, module: str, kind: str, what: str, action: str) -> Unscanned:
        if site.optional:
            what = f"{what} ({OPTIONAL})"
        return Unscanned(shown, site.line, module, kind, what, action, site.optional)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # a dangling link, a file without read permission: nothing to read
        return b""


def _absolute_tops(text: bytes) -> set[str] | None:
    """The first parts of the absolute imports that a file's text shows; None where it has an
    `import` that these patterns do not read (a continued line; one in a comment or a string)."""
    tops: set[str] = set()
    statements = 0
    for match in _FROM.finditer(text):
        statements += 1
        module = match.group(1).decode("ascii")
        if not module.startswith("."):
            tops.add(module.partition(".")[0])
    for match in _IMPORT.finditer(text):
        statements += 1
        for piece in match.group(1).decode("utf-8", "replace").split(","):
            words = piece.split()
            if not words or not all(part.isidentifier() for part in words[0].split(".")):
                return None
            tops.add(words[0].partition(".")[0])
    return tops if len(_IMPORT_WORD.findall(text)) == statements else None


def _third_party(top: str) -> bool:
    return not (top in sys.stdlib_module_names or top in sys.builtin_module_names or top in NOT_THIRD_PARTY)


def _installed(top: str) -> bool:
    """Whether this Python finds `top` (as the scan does, without importing it)."""
    try:
        return bool(package_roots(top))
    except UsageError:  # built into Python
        return True
