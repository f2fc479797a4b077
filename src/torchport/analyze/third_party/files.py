"""The files of a library that matter to the third-party scan, and what a native one holds."""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Iterator

# Byte strings found only in native code that was compiled for, or links against, the CUDA runtime.
_COMPILED_CUDA = (b"__cudaRegisterFatBinary", b"cudaLaunchKernel")

KERNEL_SOURCES = (".cu", ".cuh")
COMPILED_LIBRARIES = (".so", ".pyd")


def walk(root: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
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


def is_compiled_cuda(path: Path) -> bool:
    """Whether a native library holds CUDA device code or calls the CUDA runtime."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return any(data.find(marker) >= 0 for marker in _COMPILED_CUDA)
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses 0 bytes)
        return False

