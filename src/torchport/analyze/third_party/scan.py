"""Scanning one library: every file, and what each says about CUDA."""

from __future__ import annotations

import re
from pathlib import Path

from torchport.analyze.third_party.cuda_uses import COMPILED_CUDA, KERNEL_SOURCE, CudaUses
from torchport.analyze.third_party.files import COMPILED_LIBRARIES, KERNEL_SOURCES, is_compiled_cuda, walk
from torchport.analyze.third_party.finding import LibraryScan, ThirdPartyFinding
from torchport.errors import UsageError
from torchport.pyast import parse_quietly
from torchport.runtime.callers import honest_packages

# A Python file is parsed only if its text says one of these (cudnn and cupy do not contain "cuda").
_MENTIONS = re.compile(rb"(?i:cuda|cudnn|nccl|cupy)|cpp_extension")


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
    for path in walk(root, (".py", *KERNEL_SOURCES, *COMPILED_LIBRARIES)):
        shown = _shown(root, label, path)
        suffix = path.suffix
        if suffix == ".py":
            _scan_python(path, shown, honest, scan)
        elif suffix in KERNEL_SOURCES:
            scan.findings.append(ThirdPartyFinding(shown, 0, suffix, KERNEL_SOURCE))
        elif is_compiled_cuda(path):
            scan.findings.append(ThirdPartyFinding(shown, 0, "compiled CUDA", COMPILED_CUDA))
    scan.findings.sort(key=lambda f: (f.file, f.line, f.api))
    return scan


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
    visitor = CudaUses(shown, module, home, package in honest, package)
    visitor.visit(tree)
    scan.findings.extend(visitor.findings)

