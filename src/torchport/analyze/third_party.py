"""`analyze --mode third-party`: where a library hard-codes CUDA, so that a user knows what neither
`torchport migrate` (which rewrites only the source it is given) nor `torchport run` (which patches
torch's Python API at run time) can reach.

The counterpart of Ascend's `pytorch_analyse.sh -m third_party`, whose `full_unsupported_results.csv`
has the columns `File,3rd-party API,Message`. There the middle column names the library's function;
here it names the CUDA API found (`.cuda()`, `torch.cuda.synchronize`, `CUDAExtension`), and the
message names the library's function that holds it, then what that means under migrate and run.

Read with `ast`, not LibCST: a library such as torch has thousands of files and only lines are
wanted, not a rewrite. A file is parsed only if its text mentions CUDA at all (`_MENTIONS`), and a
file that does not parse is skipped and counted (`LibraryScan.unparseable`), never fatal.
Nothing here imports the library scanned.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.metadata
import importlib.util
import mmap
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from torchport.apis.cuda_module import DEVICE_MODULE, MODULES, is_patched
from torchport.apis.devices import DEVICE_FIRST_CALLS, DEVICE_KEYWORDS, TO_METHODS
from torchport.apis.distributed import CUDA_DIST_BACKEND, NCCL_ENUM, PROCESS_GROUPS
from torchport.errors import UsageError
from torchport.pyast import dotted_name, parse_quietly
from torchport.report.csv_table import write_table
from torchport.runtime.callers import HONEST_ENV, honest_packages
from torchport.targets import surface

HEADER = ("File", "3rd-party API", "Message")

# A Python file is parsed only if its text says one of these (cudnn and cupy do not contain "cuda").
_MENTIONS = re.compile(rb"(?i:cuda|cudnn|nccl|cupy)|cpp_extension")

# Byte strings found only in native code that was compiled for, or links against, the CUDA runtime.
_COMPILED_CUDA = (b"__cudaRegisterFatBinary", b"cudaLaunchKernel")

KERNEL_SOURCES = (".cu", ".cuh")
COMPILED_LIBRARIES = (".so", ".pyd")

# Packages the project imports that are not third-party libraries to scan.
_NOT_THIRD_PARTY = frozenset({"torch", "torchport"})

# Libraries that exist only for CUDA: an import of one is a path no patch can move.
_CUDA_ONLY_LIBRARIES = ("cupy", "pycuda", "numba.cuda", "cuda")

_CPP_EXTENSION = "torch.utils.cpp_extension."
_BUILDS_AT_RUN_TIME = {f"{_CPP_EXTENSION}load", f"{_CPP_EXTENSION}load_inline"}
_DECLARES_CUDA = {f"{_CPP_EXTENSION}CUDAExtension"}
_BUILDS_IN_SETUP = {f"{_CPP_EXTENSION}BuildExtension"}
_BACKEND_FLAGS = ("torch.backends.cudnn", "torch.backends.cuda")
_BUILD_TEST = "torch.version.cuda"
_DEVICE_WORDS = DEVICE_KEYWORDS | {"device_type"}

_ELSEWHERE = "migrate rewrites only the source it is given"
DEVICE = f"hard-codes the CUDA device: torchport run redirects it to the target at run time; {_ELSEWHERE}"
CUDA_API = ("uses torch.cuda: torchport run redirects it at run time as the target's verdict says "
            f"(`torchport targets`); {_ELSEWHERE}")
CUDA_API_HONEST = ("uses torch.cuda: torchport run gives {package} the real torch.cuda on purpose (a library "
                   f"that probes the hardware; ${HONEST_ENV} sets which): a probe sees the real machine, "
                   "any other call still needs CUDA")
CUDA_API_UNPATCHED = ("a torch.cuda API that torchport run does not patch: it still needs CUDA at run time; "
                      "neither migrate nor run reaches it")
BACKEND_FLAG = ("a cuDNN/CUDA backend flag: no effect off CUDA, left as is by migrate and run "
                "(harmless unless the library's logic depends on it)")
BUILD_TEST = ("tests for a CUDA build: torch.version.cuda is None off CUDA, so the library takes its other "
              "path; neither migrate nor run changes that")
NCCL_BACKEND = "the NCCL backend: torchport run maps it to the target's backend at run time"
NCCL_NAME = ("names the NCCL backend: torchport run maps it only where it reaches init_process_group or "
             'new_group (a test such as backend == "nccl" is false on the target)')
CUDA_EXTENSION = "a CUDA extension: neither migrate nor run can move it; it needs a kernel for the target"
CPP_EXTENSION = ("builds a C++ extension at run time: neither migrate nor run reaches native code; "
                 "CUDA among its sources needs a kernel for the target")
BUILD_EXTENSION = ("builds C++/CUDA extensions (setup.py): neither migrate nor run reaches native code; "
                   "CUDA sources among them need kernels for the target")
CUDA_LIBRARY = ("imports {module}, a CUDA-only library: neither migrate nor run can move it; this path "
                "needs another implementation on the target")
KERNEL_SOURCE = ("a CUDA kernel source (line 0: the whole file): needs a port to the target's kernel "
                 "language; neither migrate nor run reaches it")
COMPILED_CUDA = ("a compiled CUDA library (line 0: the whole file): neither migrate nor run reaches native "
                 "code; the library needs a build for the target")


@dataclass(frozen=True)
class ThirdPartyFinding:
    file: str  # the label, then the path inside the library: "timm/layers/foo.py"
    line: int  # 0: the finding is about the whole file (a CUDA source, a compiled CUDA library)
    api: str  # the CUDA API found: ".cuda()", 'device="cuda:0"', "torch.cuda.synchronize", ".cu"
    message: str  # where in the library, and what migrate and run can do about it


@dataclass
class LibraryScan:
    findings: list[ThirdPartyFinding] = field(default_factory=list)
    python_files: int = 0  # .py files seen
    parsed: int = 0  # of them, the ones that mention CUDA and were parsed
    unparseable: list[str] = field(default_factory=list)  # unreadable, or mention CUDA and do not parse


# ---------------------------------------------------------------- where a library lives


def locate_package(name: str) -> Path:
    """The folder of the installed package `name` (or its file, for a single module such as six.py),
    found as `import` would find it in this Python, without running any of its code. A dotted name
    (`torch.utils`) is looked up part by part, since `importlib.util.find_spec` would import the
    parents. A distribution name (`pytorch-lamb`) stands for the one package it installs."""
    roots = _package_roots(name)
    if not roots:
        packages = _distribution_packages(name)
        if len(packages) > 1:
            raise UsageError(f"the distribution {name} installs several packages ({', '.join(packages)}): name one")
        roots = _package_roots(packages[0]) if packages else []
    if not roots:
        raise UsageError(f"no installed package named {name} (is it installed in this Python?)")
    if len(roots) > 1:
        shown = ", ".join(str(r) for r in roots)
        raise UsageError(f"{name} is a namespace package spread over {len(roots)} folders ({shown}): "
                         "name one package inside it")
    return roots[0]


def _package_roots(name: str) -> list[Path]:
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
    files = [tree] if tree.is_file() else list(_walk(tree, (".py",)))
    imported: set[str] = set()
    for path in files:
        imported |= _absolute_imports(path)
    own = _own_modules(tree, files)
    libraries = []
    for name in sorted(imported - own - _NOT_THIRD_PARTY):
        if name in sys.stdlib_module_names or name in sys.builtin_module_names:
            continue
        try:
            libraries += _package_roots(name)
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


def _own_modules(tree: Path, files: list[Path]) -> set[str]:
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


# ---------------------------------------------------------------- scanning a library


def scan_library(root: Path, label: str) -> list[ThirdPartyFinding]:
    """Every place under `root` (a library's folder, or one module file) that hard-codes CUDA,
    sorted by file and line; `file` is shown as `label/<path under root>`."""
    return survey_library(root, label).findings


def survey_library(root: Path, label: str) -> LibraryScan:
    """`scan_library`, with the counts a report wants: files seen, parsed, not parseable."""
    root = Path(root)
    if not root.exists():
        raise UsageError(f"{root} does not exist: name an installed package or a library's folder")
    scan = LibraryScan()
    honest = honest_packages()
    for path in _walk(root, (".py", *KERNEL_SOURCES, *COMPILED_LIBRARIES)):
        shown = _shown(root, label, path)
        suffix = path.suffix
        if suffix == ".py":
            _scan_python(path, shown, honest, scan)
        elif suffix in KERNEL_SOURCES:
            scan.findings.append(ThirdPartyFinding(shown, 0, suffix, KERNEL_SOURCE))
        elif _is_compiled_cuda(path):
            scan.findings.append(ThirdPartyFinding(shown, 0, "compiled CUDA", COMPILED_CUDA))
    scan.findings.sort(key=lambda f: (f.file, f.line, f.api))
    return scan


def write_third_party_csv(path: Path, findings: Iterable[ThirdPartyFinding]) -> None:
    """full_unsupported_results.csv, in the columns of Ascend's third_party report."""
    write_table(path, HEADER, ([f.file, f.api, _with_line(f)] for f in findings))


def _with_line(finding: ThirdPartyFinding) -> str:
    """The message, led by the line it is about (the CSV has no line column: Ascend's has none)."""
    return f"line {finding.line}: {finding.message}" if finding.line else finding.message


def _walk(root: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """The files under `root` (or `root` itself) with one of `suffixes`, in a stable order;
    caches and hidden folders are skipped, links to folders are not followed."""
    if root.is_file():
        if root.suffix in suffixes:
            yield root
        return
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(d for d in folders if d != "__pycache__" and not d.startswith("."))
        for name in sorted(names):
            if name.endswith(suffixes):
                yield Path(folder, name)


def _shown(root: Path, label: str, path: Path) -> str:
    if root.is_file():
        return root.name if label in ("", root.stem) else f"{label}/{root.name}"
    relative = path.relative_to(root).as_posix()
    return f"{label}/{relative}" if label else relative


def _module_name(shown: str) -> str:
    """"timm/layers/__init__.py" -> "timm.layers": the name the message says the code is in."""
    parts = shown.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _scan_python(path: Path, shown: str, honest: frozenset[str], scan: LibraryScan) -> None:
    scan.python_files += 1
    try:
        data = path.read_bytes()
    except OSError:  # a dangling link, a file without read permission
        scan.unparseable.append(shown)
        return
    if not _MENTIONS.search(data):
        return
    tree = parse_quietly(data, str(path))
    if tree is None:
        scan.unparseable.append(shown)
        return
    scan.parsed += 1
    module = _module_name(shown)
    package = module.partition(".")[0]
    parts = module.split(".")
    home = parts if path.name == "__init__.py" else parts[:-1]  # the package relative imports start from
    visitor = _CudaUses(shown, module, home, package in honest, package)
    visitor.visit(tree)
    scan.findings.extend(visitor.findings)


def _is_compiled_cuda(path: Path) -> bool:
    """Whether a native library holds CUDA device code or calls the CUDA runtime."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return any(data.find(marker) >= 0 for marker in _COMPILED_CUDA)
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses 0 bytes)
        return False


# ---------------------------------------------------------------- what the names in a file mean


def _aliases(body: list[ast.stmt], package: list[str]) -> dict[str, str]:
    """Local name -> what it was imported as, from the imports of one scope (a module, function
    or class body, not the functions inside it): `tc` -> `torch.cuda`, `load` ->
    `torch.utils.cpp_extension.load`. Relative imports resolve against `package`. The first
    import of a name in the scope wins; a scope's names hide those of the scopes around it."""
    aliases: dict[str, str] = {}
    for node in _statements(body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases.setdefault(alias.asname, alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    aliases.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            for alias in node.names:
                if source and alias.name != "*":
                    aliases.setdefault(alias.asname or alias.name, f"{source}.{alias.name}")
    return aliases


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of one scope, nested blocks too, in order (not those of functions and
    classes inside it). Imports are statements, and skipping expressions (most of a file's
    nodes) halves the cost of a scan."""
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        yield statement
        if isinstance(statement, _SCOPES):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                pending.extend(reversed(inner))


def _absolute(node: ast.ImportFrom, package: list[str]) -> str | None:
    if node.level == 0:
        return node.module
    if node.level - 1 > len(package):
        return None
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base) or None


def _cuda_device(node: ast.AST) -> str | None:
    """The CUDA device a literal spells ("cuda", "cuda:1"), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value
        if value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit()):
            return value
    return None


def _about_devices(name: str) -> bool:
    """Whether a parameter, keyword or variable of this name holds a device (`device`,
    `map_location`, `output_device`, `DEFAULT_DEVICE`, `device_type`)."""
    return name in _DEVICE_WORDS or name.lower().endswith("device")


def _names_nccl(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    value = node.value.lower()
    return value == CUDA_DIST_BACKEND or f"cuda:{CUDA_DIST_BACKEND}" in value.replace(" ", "")


@lru_cache(maxsize=None)
def _patched_cuda_names() -> frozenset[str]:
    """The torch.cuda APIs torchport run replaces: the callables of `surface.cuda_apis()` (module
    objects and plain values are left alone), by their last name, since run also replaces them
    in torch.cuda's submodules (`torch.cuda.memory.memory_allocated`)."""
    torch_cuda = surface.load(surface.TORCH_SURFACE)["modules"]
    kinds = {f"{module}.{name}": entry.get("kind") for module in MODULES
             for name, entry in torch_cuda.get(module, {}).items()}
    return frozenset(api for api in surface.cuda_apis() if is_patched(kinds.get(api, "function")))


def _cuda_api_message(api: str, honest: bool, package: str) -> str:
    if honest:
        return CUDA_API_HONEST.format(package=package)
    patched = _patched_cuda_names()
    if api in MODULES or api in patched:
        return CUDA_API
    module, _, name = api.rpartition(".")
    if module.startswith(f"{DEVICE_MODULE}.") and f"{DEVICE_MODULE}.{name}" in patched:
        return CUDA_API
    return CUDA_API_UNPATCHED


class _CudaUses(ast.NodeVisitor):
    """One file's CUDA hard-codes, each as a finding at its own line."""

    def __init__(self, shown: str, module: str, home: list[str], honest: bool, package: str) -> None:
        self.shown, self.module, self.home = shown, module, home
        self.honest, self.package = honest, package
        self.aliases: dict[str, str] = {}
        self.scopes: list[str] = []
        self.claimed: set[int] = set()  # nccl literals already reported by their call
        self.findings: list[ThirdPartyFinding] = []

    def report(self, node: ast.AST, api: str, message: str) -> None:
        where = ".".join([self.module, *self.scopes]) if self.scopes else f"{self.module}, at import"
        self.findings.append(ThirdPartyFinding(self.shown, node.lineno, api, f"{message} (in {where})"))

    def qualified(self, dotted: str | None) -> str | None:
        """What a chain of names refers to: its first name through the imports (a bare `torch`
        counts as torch even where the file did not import it itself)."""
        if dotted is None:
            return None
        first, _, rest = dotted.partition(".")
        target = self.aliases.get(first, "torch" if first == "torch" else None)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def visit_Module(self, node: ast.Module) -> None:  # noqa: N802
        self.aliases = _aliases(node.body, self.home)
        self.generic_visit(node)

    # scopes: the library function or class that holds a finding, and the names it imports
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:  # noqa: N802
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scopes.append(node.name)  # a default is shown as the function's, whose callers get it
        self.device_defaults(node.args)
        self.scopes.pop()
        self.inside(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        for expression in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(expression)
        self.inside(node)

    def inside(self, node) -> None:
        outer, local = self.aliases, _aliases(node.body, self.home)
        if local:
            self.aliases = {**outer, **local}
        self.scopes.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()
        self.aliases = outer

    def visit_Lambda(self, node: ast.Lambda) -> None:  # noqa: N802
        self.device_defaults(node.args)
        self.visit(node.body)

    def device_defaults(self, arguments: ast.arguments) -> None:
        """`def f(device="cuda")`: a parameter about a device whose default is CUDA."""
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
        for argument, default in pairs:
            if _about_devices(argument.arg):
                self.device_literals(default, argument.arg)
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(default)

    # imports: CUDA-only libraries
    def visit_Import(self, node: ast.Import) -> None:  # noqa: N802
        self.cuda_libraries(node, [alias.name for alias in node.names])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802
        if node.level == 0 and node.module:
            self.cuda_libraries(node, [f"{node.module}.{alias.name}" for alias in node.names])

    def cuda_libraries(self, node: ast.AST, names: list[str]) -> None:
        """One finding per CUDA-only library an import statement names."""
        found = {library for name in names for library in _CUDA_ONLY_LIBRARIES
                 if name == library or name.startswith(f"{library}.")}
        for library in sorted(found):
            self.report(node, f"import {library}", CUDA_LIBRARY.format(module=library))

    # names: torch.cuda.*, backend flags, extensions
    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        if not self.named(node):
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.named(node)

    def named(self, node: ast.Attribute | ast.Name) -> bool:
        """Report a chain of names that means a CUDA API; True if it did (its parts are not
        looked at again)."""
        api = self.qualified(dotted_name(node))
        if api is None:
            return False
        message = self.meaning(api)
        if message is None:
            return False
        self.report(node, api, message)
        return True

    def meaning(self, api: str) -> str | None:
        if api == "torch.cuda" or api.startswith("torch.cuda."):
            return _cuda_api_message(api, self.honest, self.package)
        if any(api == flag or api.startswith(f"{flag}.") for flag in _BACKEND_FLAGS):
            return BACKEND_FLAG
        if api == _BUILD_TEST:
            return BUILD_TEST
        if api == NCCL_ENUM:
            return NCCL_NAME
        if api in _DECLARES_CUDA:
            return CUDA_EXTENSION
        if api in _BUILDS_IN_SETUP:
            return BUILD_EXTENSION
        return None

    # calls: .cuda(), devices, backends, extensions built at run time
    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        function = node.func
        callee = self.qualified(dotted_name(function))
        if callee in _BUILDS_AT_RUN_TIME:
            self.report(node, callee, CUDA_EXTENSION if _builds_cuda(node) else CPP_EXTENSION)
            for argument in (*node.args, *node.keywords):
                self.visit(argument)
            return
        if isinstance(function, ast.Attribute) and function.attr == "cuda" and callee != "torch.cuda":
            self.report(node, ".cuda()", DEVICE)
        self.devices(node, function, callee)
        self.backends(node, function)
        self.generic_visit(node)

    def devices(self, node: ast.Call, function: ast.AST, callee: str | None) -> None:
        first = node.args[0] if node.args else None
        device = _cuda_device(first) if first is not None else None
        if device and callee in DEVICE_FIRST_CALLS:
            self.report(first, f'{callee}("{device}")', DEVICE)
        elif device and isinstance(function, ast.Attribute) and function.attr in TO_METHODS:
            self.report(first, f'.{function.attr}("{device}")', DEVICE)
        for keyword in node.keywords:
            if keyword.arg in _DEVICE_WORDS:
                self.device_literals(keyword.value, keyword.arg)

    def device_literals(self, value: ast.AST, name: str) -> None:
        """`name="cuda"`, or `name="cuda" if ... else "cpu"`: CUDA device literals given to a name."""
        for literal in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
            device = _cuda_device(literal)
            if device:
                self.report(literal, f'{name}="{device}"', DEVICE)

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        """`self.device = "cuda"`, `DEFAULT_DEVICE = "cuda:0"`: a name about a device given a CUDA one."""
        for target in node.targets:
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if _about_devices(name):
                self.device_literals(node.value, name)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        name = node.target.attr if isinstance(node.target, ast.Attribute) else getattr(node.target, "id", "")
        if node.value is not None and _about_devices(name):
            self.device_literals(node.value, name)
        self.generic_visit(node)

    def backends(self, node: ast.Call, function: ast.AST) -> None:
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
        if name not in PROCESS_GROUPS:
            return
        chosen = [node.args[0]] if node.args else []
        chosen += [k.value for k in node.keywords if k.arg == "backend"]
        for value in chosen:
            if _names_nccl(value):
                self.claimed.add(id(value))
                self.report(value, f'{name}("{value.value}")', NCCL_BACKEND)

    def visit_Constant(self, node: ast.Constant) -> None:  # noqa: N802
        if id(node) not in self.claimed and _names_nccl(node):
            self.report(node, f'"{node.value}"', NCCL_NAME)


def _builds_cuda(call: ast.Call) -> bool:
    """Whether a cpp_extension.load call visibly builds CUDA: a .cu source, `cuda_sources=` or
    `with_cuda=True`."""
    for keyword in call.keywords:
        if keyword.arg == "cuda_sources" or (
            keyword.arg == "with_cuda" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        ):
            return True
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(KERNEL_SOURCES)
        for node in ast.walk(call)
    )
