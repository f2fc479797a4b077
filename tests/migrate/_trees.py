"""What tests of whole trees share: a snapshot of a tree that a migration must leave as it was."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple]:
    """Everything observable about a tree without following links: content, mode, mtime."""
    state = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = path.lstat()
            key = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                state[key] = ("link", os.readlink(path), info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode):
                state[key] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mode, info.st_mtime_ns)
            else:
                state[key] = ("other", info.st_mode, info.st_mtime_ns)
    info = root.lstat()
    state["."] = ("root", info.st_mode, info.st_mtime_ns)
    return state
