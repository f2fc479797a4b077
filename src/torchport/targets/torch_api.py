"""What a qualified torch name is in the pinned torch: a name that exists, one that does not (with
the nearest that does), one the data cannot judge, and the aten operator an API is.

Read from targets/data (tools/gen_api.py): each walked namespace's public names by kind, the
modules that answer names at run time, torch.Tensor's members, and the API -> operator links
taken from torch's own bindings. Where the data does not walk a module (torch.fx, torch.cuda: its
surface is another data's), or a module answers names at run time, nothing is said.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache

from torchport.targets.surface import TORCH_API, load

TORCH = "torch"


@dataclass(frozen=True)
class Unknown:
    """A name that does not exist in torch: the first part of it that does not (`torch.from_tensor`
    of `torch.from_tensor(x).float`), and the nearest existing name of that namespace; or one that
    torch keeps only to raise that it was removed (`torch.solve`), and its replacement."""

    api: str
    nearest: str | None
    removed: bool = False


class TorchApi:
    def __init__(self, data: dict, added: frozenset[str] = frozenset()) -> None:
        """`added`: modules that packages other than torch add to it (torch_npu's `torch.npu`)."""
        self.version = data["version"]
        self.kinds: dict[str, dict[str, str]] = {
            module: {name: kind for kind, names in by_kind.items() for name in names}
            for module, by_kind in data["modules"].items()
        }
        self.open = frozenset(data["open"])
        self.members = {owner: frozenset(names) for owner, names in data["members"].items()}
        self.operators: dict[str, str] = data["lowers_to"]
        self.removed: dict[str, str] = data["removed"]
        # modules other packages add: the targets' own, and one per device type torch knows
        self.added = added | {f"{TORCH}.{device}" for device in data["device_types"]}

    @lru_cache(maxsize=4096)  # (the names of every file that uses torch are asked about: most are the same)
    def unknown(self, qualified: str) -> Unknown | None:
        """Whether `qualified` ('torch.nn.functional.relu') names nothing in torch; None where it
        exists or the data cannot say (a private name, an unwalked or open module, an attribute
        of a function, a value or a class whose members are not recorded)."""
        parts = qualified.split(".")
        if parts[0] != TORCH or any(p.startswith("_") for p in parts) or self._added(qualified):
            return None
        owner = TORCH
        for part in parts[1:]:
            if owner in self.members:
                return None if part in self.members[owner] else self._missing(owner, part, self.members[owner])
            names = self.kinds.get(owner)
            if names is None:
                return None
            kind = names.get(part)
            if kind is None:
                return None if owner in self.open else self._missing(owner, part, names)
            owner = f"{owner}.{part}"
            if owner in self.removed:
                return Unknown(owner, self.removed[owner] or None, removed=True)
            if kind not in ("module", "class"):
                return None
            if kind == "class" and owner not in self.members:
                return None
        return None

    def names_below(self, qualified: str) -> bool:
        """Whether the data judges the names below `qualified` (a walked module, torch.Tensor)."""
        return qualified in self.kinds or qualified in self.members

    def _added(self, qualified: str) -> bool:
        return any(qualified == module or qualified.startswith(module + ".") for module in self.added)

    def _missing(self, owner: str, part: str, names) -> Unknown:
        close = difflib.get_close_matches(part, sorted(names), n=1)
        return Unknown(f"{owner}.{part}", f"{owner}.{close[0]}" if close else None)

    def operator(self, qualified: str) -> str | None:
        """The aten operator a call of `qualified` is ('torch.var_mean' -> 'var_mean'); None where
        the API is no one operator (a class, a Python function of several)."""
        return self.operators.get(qualified)


@lru_cache(maxsize=None)
def torch_api() -> TorchApi:
    """The pinned torch's API, with what the targets' own packages add to it: their device
    modules (torch.npu) and tensor methods (`torch.Tensor.npu`)."""
    from torchport import targets

    every = targets.all_targets().values()
    added = {t.device_module for t in every if t.device_module}
    added |= {f"{TORCH}.Tensor.{t.tensor_method}" for t in every if t.tensor_method}
    return TorchApi(load(TORCH_API), frozenset(added))
