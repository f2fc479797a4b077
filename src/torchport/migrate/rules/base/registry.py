"""How the rules are found: each module directly in the rules package is imported, and every
class defined there that has a `code` is a rule (a family's base has none; base/ is not walked).
So a new rule is one new file. They run in their `order`, which must be unique: the fixes of
two rules on one node compose in that order, and a tie would leave it to the file names."""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Iterable

from torchport.migrate.rules.base.rule import Rule


def discover(package: str, path: Iterable[str]) -> list[type[Rule]]:
    """The rules of the modules at `path` (the package `package`'s), in their order."""
    found: list[type[Rule]] = []
    for module_info in pkgutil.iter_modules(path):
        if module_info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{module_info.name}")
        found += [
            value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__ and value.code
        ]
    _check(found)
    return sorted(found, key=lambda rule: rule.order)


def _check(rules: list[type[Rule]]) -> None:
    """Every rule has its own code and its own place in the order."""
    unplaced = [rule.__name__ for rule in rules if rule.order <= 0]
    if unplaced:
        raise ValueError(f"rules without an order: {', '.join(sorted(unplaced))}")
    for what, key in (("code", lambda rule: rule.code), ("order", lambda rule: rule.order)):
        counts = Counter(map(key, rules))
        shared = sorted(f"{rule.__name__} ({key(rule)})" for rule in rules if counts[key(rule)] > 1)
        if shared:
            raise ValueError(f"rules with the same {what}: {', '.join(shared)}")
