"""Calling the native twin of an apex class with the arguments apex's own was given, as
apis/apex.py's `Replacement` says: the kept parameters (renamed where the native name differs),
the class chosen by a parameter (FusedAdam's adam_w_mode), and a clear error for a value native
torch cannot keep. The source conversion reads the same data."""

from __future__ import annotations

import ast
import importlib

from torchport.apis.apex import Replacement


class NoNativeEquivalent(ValueError):
    """An apex argument whose value native torch cannot reproduce."""


def refuse_differing(api: str, replacement: Replacement, given: dict) -> None:
    for name, (matching, why) in replacement.differs.items():
        if name in given and given[name] != ast.literal_eval(matching):
            raise NoNativeEquivalent(f"{api}({name}={given[name]!r}) has no native equivalent: {why} "
                                     f"(only {name}={matching} is kept)")


def native_name(replacement: Replacement, given: dict) -> str:
    if replacement.chooses is None:
        return replacement.native
    parameter, default, otherwise = replacement.chooses
    return replacement.native if given.get(parameter, ast.literal_eval(default)) else otherwise


def native_arguments(replacement: Replacement, given: dict) -> dict:
    """The keyword arguments of the native call: kept and renamed parameters, by native name."""
    names = [*replacement.keeps, *(name for name in replacement.renames if name not in replacement.keeps)]
    return {replacement.renames.get(name, name): given[name] for name in names if name in given}


def dropped(replacement: Replacement, given: dict, defaults: dict) -> list[str]:
    """The parameters given another value than apex's default that the native call does not take."""
    passed = {*replacement.keeps, *replacement.renames, *replacement.differs}
    if replacement.chooses is not None:
        passed.add(replacement.chooses[0])
    return [name for name, value in given.items() if name not in passed and defaults.get(name) != value]


def resolve(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)
