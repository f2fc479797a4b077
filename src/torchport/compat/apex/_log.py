"""The run-time log of the stand-in's uses: under `torchport run` (or `import torchport.auto`)
each apex call site gets one line, as every other redirected call does; elsewhere, nothing."""

from __future__ import annotations

import logging
import sys

from torchport.active_session import active
from torchport.targets.verdict import Kind, Verdict

logger = logging.getLogger("torchport.compat.apex")


def note(api: str, kind: Kind, replacement: str | None, note: str = "") -> None:
    """Log a call of `api` at the first frame outside torch and torchport."""
    session = active()
    if session is not None:
        session.log.note_frame(Verdict(api, kind, replacement, note), sys._getframe(1))


def same(api: str, replacement: str, text: str = "") -> None:
    note(api, Kind.SAME, replacement, text)


def adapted(api: str, replacement: str, text: str) -> None:
    note(api, Kind.ADAPTED, replacement, text)


def noop(api: str, text: str) -> None:
    note(api, Kind.NOOP, None, text)


def ignored(api: str, names) -> None:
    """One line for the arguments native torch decides for itself."""
    if names:
        logger.warning("%s: %s ignored (native torch decides these itself)", api, ", ".join(names))
