"""Where a command will write what a run produces, checked before the run starts: a report that
cannot be written after ten minutes of training costs the ten minutes.

One rule for every such path: a missing folder is made, one level only (as `mkdir` makes it), when
the folder above it exists, so `-o runs/ops.json` or `-o reports` works in a fresh checkout while a
mistyped `-o /data/ruhs/run1/ops.json` is an error at once, not a tree made in the wrong place.
A file where a folder should be, a folder where the file should be, or a place this process may
not write in is a UsageError (one line, status 2) naming the path and what is wrong with it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from torchport.errors import UsageError

RULE = "a missing folder is made when the one above it exists"  # for --help texts


def output_folder(path: str | os.PathLike, option: str) -> Path:
    """`path` as a folder this process can write files in, made if it is missing and its parent
    exists. `option` ("-o") names the argument in the error."""
    folder = Path(path)
    if not folder.exists():
        _make(folder, option)
    elif not folder.is_dir():
        raise UsageError(f"{option} {folder}: is a file, not a folder")
    _probe(folder, option, folder)
    return folder


def output_file(path: str | os.PathLike, option: str) -> Path:
    """`path` as a file this process can write (it need not exist yet; its folder is made as
    `output_folder` makes one)."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{option} {file}: is a folder; give the file to write in it")
    folder = file.parent
    if not folder.exists():
        _make(folder, option, file)
    elif not folder.is_dir():
        raise UsageError(f"{option} {file}: {folder} is a file, not a folder")
    if file.exists():  # written in place (a device or a FIFO too): its own permission decides
        if not os.access(file, os.W_OK):
            raise UsageError(f"{option} {file}: cannot write it (permission denied, or a read-only file system)")
        return file
    _probe(folder, option, file)
    return file


def _make(folder: Path, option: str, file: Path | None = None) -> None:
    named = file or folder
    parent = folder.parent
    if not parent.exists():
        raise UsageError(f"{option} {named}: no folder {parent} to make {folder.name} in ({RULE})")
    if not parent.is_dir():
        raise UsageError(f"{option} {named}: {parent} is a file, not a folder")
    try:
        folder.mkdir()
    except FileExistsError:  # made meanwhile, by another rank of the same launch
        pass
    except OSError as error:
        raise UsageError(f"{option} {named}: cannot make the folder {folder} ({error.strerror or error})") from None


def _probe(folder: Path, option: str, named: Path) -> None:
    """Whether a file can be made in `folder`: tried, as permissions, read-only mounts and quotas
    are only known by trying (root passes every permission test but not a read-only mount)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise UsageError(f"{option} {named}: cannot write in {folder} ({error.strerror or error})") from None
