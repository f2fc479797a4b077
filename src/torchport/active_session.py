"""The run-time session in force, if any: set by torchport.runtime (`apply`, `undo`), read by the
stand-ins of torchport.compat, which log to it and answer for its target. It lies at the floor so
that the stand-ins need not import the runtime that serves them."""

from __future__ import annotations

_active = None  # the runtime's Session in force


def active():
    """The Session in force, or None."""
    return _active


def set_active(session) -> None:
    global _active
    _active = session
