"""A CUDA script as `torchport migrate --target T` writes it, imported as a module: the benches
time what migrate writes on this host, not a hand-written stand-in for it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from torchport import targets
from torchport.migrate import migrate_source


def migrated(script: Path, target: str, out: Path) -> Path:
    """Write `script` migrated to `target` into `out` (a folder per target): the file's path."""
    result = migrate_source(script.read_bytes(), targets.get(target), script.name)
    if result.error is not None:
        raise SystemExit(f"{script.name}: migrate --target {target} failed: {result.error}")
    path = out / target / script.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(result.source)
    return path


def load(path: Path, name: str):
    """Import the file at `path` as module `name` (its `__main__` block does not run)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
