"""A folder no one can write in, for the tests of output checks: /sys refuses new files even to
root, whom no permission bit stops. Tests that need it are skipped where it is missing or writable."""

from __future__ import annotations

import os
import tempfile

import pytest

UNWRITABLE = "/sys"


def _writable(folder: str) -> bool:
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


needs_unwritable = pytest.mark.skipif(not os.path.isdir(UNWRITABLE) or _writable(UNWRITABLE),
                                      reason=f"needs a folder no one can write in ({UNWRITABLE})")
