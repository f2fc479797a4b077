"""Which entries of the input tree a migration takes, and why the others are left.

`walk` yields the relative path of every regular file to migrate or copy; every entry it does
not yield is appended to `skipped` with the reason, so that each entry of SRC is accounted for.
"""

from __future__ import annotations

import os
from pathlib import Path

SKIPPED_DIRS = {"__pycache__", ".git", ".hg", ".svn"}


def walk(src: Path, skipped: list[tuple[str, str]]):
    """Relative paths of the files under `src`, never following a link out of it."""
    if src.is_file():
        yield Path(src.name)
        return
    for root, dirs, files in os.walk(src, followlinks=False):
        root_path = Path(root)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in list(dirs):
            path = root_path / name
            if path.is_symlink():
                dirs.remove(name)
                skipped.append((str(path.relative_to(src)), "a linked folder: not followed"))
        for name in sorted(files):
            path = root_path / name
            relative = path.relative_to(src)
            if path.is_symlink():
                resolved = path.resolve()
                if not resolved.is_file() or src not in resolved.parents:
                    skipped.append((str(relative), "a link that leads out of the input (or nowhere): not followed"))
                    continue
            if not path.is_file():  # a FIFO, socket or device: reading it could block or never end
                skipped.append((str(relative), "not a regular file: not copied"))
                continue
            yield relative
