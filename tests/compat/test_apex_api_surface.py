"""The stand-in takes every parameter of apex's public API by apex's name, in apex's positional
order, with apex's defaults (tests/data/apex_api.json, read from NVIDIA/apex); and apis/apex.py,
which the source conversion reads too, names the same parameters."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from torchport.apis import apex as facts

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "apex_api.json").read_text())["signatures"]
KINDS = {"keyword": inspect.Parameter.KEYWORD_ONLY, "var_keyword": inspect.Parameter.VAR_KEYWORD}


def stand_in(api: str):
    """The stand-in's callable for an apex name (a class: what constructing it calls)."""
    module, _, name = f"{facts.COMPAT}{api[len(facts.APEX):]}".rpartition(".")
    found = getattr(importlib.import_module(module), name)
    if not inspect.isclass(found):
        return found
    return found.__new__ if "__new__" in vars(found) else found.__init__


def parameters(api: str) -> list[inspect.Parameter]:
    found = list(inspect.signature(stand_in(api)).parameters.values())
    return [p for p in found if p.name not in ("self", "cls")] if inspect.isclass(_owner(api)) else found


def _owner(api: str):
    module, _, name = f"{facts.COMPAT}{api[len(facts.APEX):]}".rpartition(".")
    return getattr(importlib.import_module(module), name)


def _normal(value):
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("api", sorted(DATA))
def test_the_stand_in_takes_apexs_parameters_in_apexs_order_with_apexs_defaults(api):
    ours = parameters(api)
    positional = [p for p in ours if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    by_name = {p.name: p for p in ours}
    for index, expected in enumerate(DATA[api]["parameters"]):
        name, kind = expected["name"], KINDS.get(expected.get("kind"))
        assert name in by_name, f"{api}: no parameter {name}"
        mine = by_name[name]
        if kind is None:
            assert positional[index].name == name, f"{api}: {name} is not at apex's position {index}"
            assert (mine.default is inspect.Parameter.empty) == ("default" not in expected), f"{api}: {name}"
            if "default" in expected:
                assert _normal(mine.default) == expected["default"], f"{api}: {name}'s default"
        else:
            assert mine.kind is kind, f"{api}: {name} is not {expected['kind']}"


def test_every_parameter_beyond_apexs_comes_after_apexs_own():
    """(a later apex release's extra parameters: accepted, and no apex argument shifts)"""
    for api, entry in DATA.items():
        names = [p.name for p in parameters(api) if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        apex_names = [p["name"] for p in entry["parameters"] if "kind" not in p]
        assert names[:len(apex_names)] == apex_names, api
        assert set(entry.get("later", ())) <= set(names[len(apex_names):]), api


def test_the_catalogue_names_initialize_and_scale_loss_parameters_as_apex_does():
    assert facts.INITIALIZE_PARAMETERS == tuple(p["name"] for p in DATA[facts.INITIALIZE]["parameters"])
    assert facts.SCALE_LOSS_PARAMETERS == tuple(p["name"] for p in DATA[facts.SCALE_LOSS]["parameters"])


def test_the_stand_ins_initialize_takes_ascends_parameters_too():
    names = [p.name for p in parameters(facts.INITIALIZE)]
    assert names == [*facts.INITIALIZE_PARAMETERS, *facts.ASCEND_INITIALIZE_PARAMETERS]


REPLACED = {**facts.OPTIMIZERS, **facts.PARALLEL, **facts.NORMALIZATION}


@pytest.mark.parametrize("api", sorted(set(REPLACED) & set(DATA)))
def test_each_replacement_names_only_parameters_apex_has(api):
    replacement = REPLACED[api]
    entry = DATA[api]["parameters"]
    names = {p["name"] for p in entry} | set(DATA[api].get("later", ()))
    takes_any = any(p.get("kind") == "var_keyword" for p in entry)
    named = {*replacement.keeps, *replacement.defaults, *replacement.renames, *replacement.differs}
    if replacement.chooses is not None:
        named.add(replacement.chooses[0])
    assert named <= names or takes_any, f"{api}: {sorted(named - names)} are not apex's"


def test_every_optimizer_parameter_called_harmless_is_one_apex_has():
    optimizer_parameters = {name for api, entry in DATA.items() if api.startswith("apex.optimizers.")
                            for name in [*(p["name"] for p in entry["parameters"]), *entry.get("later", ())]}
    assert set(facts.HARMLESS_OPTIMIZER_PARAMETERS) <= optimizer_parameters


def test_the_check_catches_a_missing_parameter(monkeypatch):
    import torchport.compat.apex.amp as amp

    def initialize(models, optimizers=None, enabled=True):  # (opt_level left out)
        return models

    monkeypatch.setattr(amp, "initialize", initialize)
    with pytest.raises(AssertionError, match="no parameter opt_level"):
        test_the_stand_in_takes_apexs_parameters_in_apexs_order_with_apexs_defaults(facts.INITIALIZE)
