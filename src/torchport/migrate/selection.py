"""Which rules run: `--select`, `--ignore`, `--extend-select` by code or code prefix (`TP0`,
`TP11`, `TP003`), as ruff spells them, on migrate, analyze and check.

A code is on when the longest prefix of it that is selected is longer than the longest that is
ignored (the more specific wins; a tie goes to ignore): `--select TP0 --ignore TP003` runs every
TP0xx rule but TP003; `--ignore TP0 --select TP003` runs TP003 alone of them. A rule that is off
neither changes code nor writes rows.

Three kinds of code are steps rather than rules: the NPU conversion of `--from npu` (TP4xx), the
apex conversion (TP300-TP307) and `--distributed` (TP200-TP206) rewrite a whole file at once, so
each runs only when all its codes are on (`--ignore TP3` leaves apex code as it is). TP000 (the imports the new code needs) follows
the rules that ran: it cannot be turned off, or the code they wrote would not import.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from torchport.errors import UsageError
from torchport.migrate.codes import known_codes

ALL_PREFIX = "TP"
_EVERYTHING = "ALL"  # ruff's word for every code


@dataclass(frozen=True)
class RuleSelection:
    """The prefixes selected and ignored (hashable: the source module caches rule lists by it)."""

    select: tuple[str, ...] = (ALL_PREFIX,)
    ignore: tuple[str, ...] = ()

    def allows(self, code: str) -> bool:
        chosen = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        dropped = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return chosen > dropped

    def allows_all(self, codes) -> bool:
        return all(self.allows(code) for code in codes)

    @property
    def is_everything(self) -> bool:
        return self == ALL


ALL = RuleSelection()


def apex_codes() -> frozenset[str]:
    from torchport.apex_to_torch.changes import CODES

    return frozenset(CODES)


def amp_codes() -> frozenset[str]:
    from torchport.mixed_precision.changes import CODES

    return frozenset(CODES)


def npu_codes() -> frozenset[str]:
    from torchport.npu_to_cuda.changes import CODES

    return frozenset(CODES)


def distributed_codes() -> frozenset[str]:
    from torchport.distribute.changes import CODES

    return frozenset(CODES)


def words(text: str) -> list[str]:
    """`TP0,TP11` or `TP0 TP11` (argparse type): the words, checked later (rule_selection_from),
    so that a wrong one costs one line, as a wrong one from a configuration file does."""
    return text.replace(",", " ").split()


def prefixes(text: str) -> list[str]:
    """The prefixes `text` names, each checked to begin some code (a UsageError if not)."""
    found = []
    for word in words(text):
        word = word.upper()
        if word == _EVERYTHING:
            word = ALL_PREFIX
        if not any(code.startswith(word) for code in known_codes()):
            raise UsageError(f"{word!r} is no rule code nor the beginning of one (e.g. TP0, TP11, TP003)")
        found.append(word)
    return found


def add_rule_selection_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("choosing rules (as ruff does)")
    group.add_argument(
        "--select", type=words, action="extend", metavar="CODES",
        help="run only the rules whose codes begin so (comma-separated or repeated: TP0, TP11, TP003; default: all)",
    )
    group.add_argument(
        "--extend-select", dest="extend_select", type=words, action="extend", metavar="CODES",
        help="run these rules too, on top of --select",
    )
    group.add_argument(
        "--ignore", type=words, action="extend", metavar="CODES",
        help="do not run these rules: no change, no row (the more specific of --select and --ignore wins)",
    )


def rule_selection_from(args: argparse.Namespace) -> RuleSelection:
    """The selection the parsed options ask for (dests `select`, `ignore`, `extend_select`; a
    configuration file may have filled them in, as a list or a comma-separated string)."""
    select = _words(getattr(args, "select", None)) or [ALL_PREFIX]
    select += _words(getattr(args, "extend_select", None))
    ignore = _words(getattr(args, "ignore", None))
    return RuleSelection(tuple(dict.fromkeys(select)), tuple(dict.fromkeys(ignore)))


def _words(value) -> list[str]:
    """The prefixes of a dest's value (checked again: a configuration file's never met argparse)."""
    if not value:
        return []
    return prefixes(value) if isinstance(value, str) else [word for item in value for word in prefixes(str(item))]
