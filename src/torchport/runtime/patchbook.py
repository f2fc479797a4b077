"""A record of every change the runtime made to torch, so that `undo()` restores it exactly: the
attributes it replaced, the entries it set in torch's registries (TorchScript's builtin table) and
anything else it must take back (an import hook), undone in the reverse order."""

from __future__ import annotations

import contextlib

ABSENT = object()  # the owner had no attribute of its own by that name (or the registry no entry)
_ATTRIBUTE, _ITEM, _CALL = "attribute", "item", "call"


class PatchBook:
    """Replaces attributes on modules and classes and remembers the originals.

    The original is read from the owner's own `__dict__` (not through getattr), so a class's
    staticmethod, an inherited method or a module global is put back as exactly the same object,
    or deleted again where the owner had none of its own. Entries set in a registry (a dict of
    torch's) are put back or deleted the same way.
    """

    def __init__(self) -> None:
        # (kind, owner, name, original or ABSENT); for _CALL: (kind, function, None, None)
        self._entries: list[tuple[str, object, object, object]] = []

    def replace(self, owner: object, name: str, replacement: object) -> None:
        original = vars(owner).get(name, ABSENT)
        self._entries.append((_ATTRIBUTE, owner, name, original))
        setattr(owner, name, replacement)

    def replace_everywhere(self, owners, name: str, original: object, replacement: object) -> None:
        """Replace `name` on each owner whose attribute is `original` (a function re-exported in
        several modules, such as `torch.load` and `torch.serialization.load`)."""
        for owner in owners:
            if vars(owner).get(name, ABSENT) is original:
                self.replace(owner, name, replacement)

    def register(self, registry: dict, key: object, value: object) -> None:
        """Set `registry[key] = value` in a dict of torch's, to be undone with the patches."""
        self._entries.append((_ITEM, registry, key, registry.get(key, ABSENT)))
        registry[key] = value

    def on_restore(self, function) -> None:
        """Call `function()` when the patches are undone (in order with the other changes)."""
        self._entries.append((_CALL, function, None, None))

    def patched(self) -> list[tuple[object, str, object]]:
        """(owner, name, original) for every replaced attribute, in the order they were made."""
        return [(owner, name, original) for kind, owner, name, original in self._entries if kind is _ATTRIBUTE]

    def registered(self) -> list[tuple[dict, object, object]]:
        """(registry, key, previous value or ABSENT) for every registry entry set, in order."""
        return [(registry, key, original) for kind, registry, key, original in self._entries if kind is _ITEM]

    @contextlib.contextmanager
    def suspended(self):
        """torch as it was, for the duration (attributes only; for code that takes a snapshot of
        torch, such as torch.compile's import); every replacement is put back afterwards."""
        now = [(owner, name, vars(owner).get(name, ABSENT), original)
               for kind, owner, name, original in self._entries if kind is _ATTRIBUTE]
        for owner, name, _, original in reversed(now):
            _set(owner, name, original)
        try:
            yield
        finally:
            for owner, name, replacement, _ in now:
                _set(owner, name, replacement)

    def restore_all(self) -> None:
        while self._entries:
            kind, owner, name, original = self._entries.pop()
            if kind is _CALL:
                owner()
            elif kind is _ITEM:
                if original is ABSENT:
                    owner.pop(name, None)
                else:
                    owner[name] = original
            else:
                _set(owner, name, original)

    def __len__(self) -> int:
        return len(self._entries)


def _set(owner: object, name: str, value: object) -> None:
    if value is ABSENT:
        if name in vars(owner):
            delattr(owner, name)
    else:
        setattr(owner, name, value)
