"""A record of every attribute the runtime replaced, so that `undo()` restores torch exactly."""

from __future__ import annotations

ABSENT = object()  # the owner had no attribute of its own by that name


class PatchBook:
    """Replaces attributes on modules and classes and remembers the originals.

    The original is read from the owner's own `__dict__` (not through getattr), so a class's
    staticmethod, an inherited method or a module global is put back as exactly the same object,
    or deleted again where the owner had none of its own.
    """

    def __init__(self) -> None:
        self._entries: list[tuple[object, str, object]] = []  # (owner, name, original or ABSENT)

    def replace(self, owner: object, name: str, replacement: object) -> None:
        original = vars(owner).get(name, ABSENT)
        self._entries.append((owner, name, original))
        setattr(owner, name, replacement)

    def replace_everywhere(self, owners, name: str, original: object, replacement: object) -> None:
        """Replace `name` on each owner whose attribute is `original` (a function re-exported in
        several modules, such as `torch.load` and `torch.serialization.load`)."""
        for owner in owners:
            if vars(owner).get(name, ABSENT) is original:
                self.replace(owner, name, replacement)

    def patched(self) -> list[tuple[object, str, object]]:
        """(owner, name, original) for every replacement, in the order they were made."""
        return list(self._entries)

    def restore_all(self) -> None:
        while self._entries:
            owner, name, original = self._entries.pop()
            if original is ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, original)

    def __len__(self) -> int:
        return len(self._entries)
