"""Loaded at start-up by every Python process with this directory on PYTHONPATH: applies
SIMULATE_NATIVE_BF16 (see native_bf16.py), then runs the sitecustomize this one hides."""

import importlib.machinery
import importlib.util
import os
import sys

import native_bf16

_native = native_bf16.requested()
if _native is not None:
    native_bf16.force(_native)


def _run_the_hidden_sitecustomize() -> None:
    """A distribution's own sitecustomize (Debian's, for one) further down sys.path."""
    here = native_bf16.DIRECTORY
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_run_the_hidden_sitecustomize()
