"""DataParallel -> DDP; the model wrapped in DDP after it is on its device."""

from __future__ import annotations

from torchport.distribute.changes import Change


def wrap_model(source: str, plan, options) -> tuple[str, list[Change]]:
    return source, []  # TODO
