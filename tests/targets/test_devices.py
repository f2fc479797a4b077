"""One spelling of devices for both mechanisms (what `migrate` writes as source and what `run`
maps at run time name the same device, on every target), and the source the targets hold is
checked: it parses, and names modules that import."""

import dataclasses
import importlib
import re

import pytest
import torch

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.targets.base import EXPRESSION_FIELDS, Target
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import adapted
from torchport.runtime.choose import device_type_of
from torchport.runtime.devices import DeviceMapper
from torchport.targets.devices import any_device_source, cuda_device, device_source, indexed_device_source


@pytest.mark.parametrize(("text", "expected"), [("cuda", (True, None)), ("cuda:3", (True, "3")), ("cudax", (False, None)),
                                                ("my_cuda", (False, None)), ("cuda:", (False, None)), ("npu:1", (False, None))])
def test_only_whole_cuda_device_strings_are_cuda_devices(text, expected):
    assert cuda_device(text) == expected


def _same_device(a, b) -> bool:
    """(a device type torch does not know here, npu without torch_npu: compared as type and index)"""
    a_type, _, a_index = str(a).partition(":")
    b_type, _, b_index = str(b).partition(":")
    return a_type == b_type and (a_type == "cpu" or a_index == b_index)


def _torch_knows(device_type: str) -> bool:
    """Whether torch here makes a torch.device of this type (npu's needs torch_npu imported)."""
    try:
        torch.device(device_type)
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("name", targets.names())
@pytest.mark.parametrize("text", ["cuda", "cuda:0", "cuda:3"])
def test_the_rewriter_and_the_patcher_name_the_same_device(name, text):
    target = targets.get(name)
    device_type = device_type_of(target)  # (accelerator: decided on this machine, as run decides)
    known = _torch_knows(device_type)
    assert known or name not in BUILT_IN or name == "npu"  # (the other built-in devices are torch's own)
    mapper = DeviceMapper(device_type, target.keeps_device_index, torch.device)
    namespace = {"DEVICE_TYPE": device_type, "torch": torch}
    index = cuda_device(text)[1]
    written = eval(device_source(target, index), namespace)
    assert _same_device(written, mapper.map(text))
    if index is not None and known:  # (an index computed at run time: an int here)
        computed = eval(indexed_device_source(target, "rank"), {**namespace, "rank": int(index)})
        assert _same_device(computed, mapper.map(text))
    if known:
        assert _same_device(mapper.map(torch.device(text)), mapper.map(text))


# --- the source the targets hold ---------------------------------------------------------------

_ROOT = re.compile(r"(?<![\w.\"'])([A-Za-z_]\w*)\.")


def _sources(target):
    for field_name in EXPRESSION_FIELDS:
        yield field_name, getattr(target, field_name)
    for api in cuda_apis():
        verdict = target.verdict(api)
        yield from ((f"{api} {part}", getattr(verdict, part)) for part in ("replacement", "guard", "value"))


@pytest.mark.parametrize("name", targets.names())
def test_every_expression_a_target_writes_parses_and_names_modules_that_import(name):
    """What migrate writes into files (and run evaluates): valid Python, whose dotted names start
    at a module that imports here, the target's own setup import, or one of its definitions."""
    target = targets.get(name)
    for what, source in _sources(target):
        if not source:
            continue
        compile(source, what, "eval")
        for root in set(_ROOT.findall(source)) - set(target.definitions) - {target.setup_import}:
            importlib.import_module(root)


def test_a_target_with_source_that_does_not_parse_is_refused_when_it_is_made():
    cpu = targets.get("cpu")
    with pytest.raises(ValueError, match="dist_backend is not valid Python"):
        dataclasses.replace(cpu, dist_backend='"gloo')
    with pytest.raises(ValueError, match="torch.cuda.x replacement is not valid Python"):
        dataclasses.replace(cpu, overrides={"torch.cuda.x": adapted("torch.cuda.x", "torch.cpu.(x", "")})
    assert isinstance(dataclasses.replace(cpu, dist_backend='"gloo"'), Target)


def test_a_definition_that_does_not_parse_is_refused_when_the_target_is_made():
    """A definition is written into every migrated file that uses it: one that is not Python
    would break them all (the check once sat after a `raise`, and never ran)."""
    cpu = targets.get("cpu")
    with pytest.raises(ValueError, match="HELPER is not valid Python"):
        dataclasses.replace(cpu, definitions={**cpu.definitions, "HELPER": "HELPER = (1,"})
    assert dataclasses.replace(cpu, definitions={**cpu.definitions, "HELPER": "HELPER = (1,)"}).definitions["HELPER"]


@pytest.mark.parametrize("name", ["npu", "xpu", "accelerator"])
def test_an_index_computed_at_run_time_may_be_none(name):
    """`model.to(args.gpu)` with `--gpu` left at None: the current device, never "xpu:None"
    (mps and cpu have one device: their spelling has no index at all)."""
    source = indexed_device_source(targets.get(name), "gpu")
    assert source.startswith("torch.device(") and source.endswith(", gpu)")
    if name != "npu":  # (torch knows npu only with torch_npu)
        assert eval(source, {"torch": torch, "gpu": None, "DEVICE_TYPE": "cpu"}).index is None


@pytest.mark.parametrize("value", [None, 0, 3, "cuda", "cuda:2", torch.device("cuda", 1), "cpu"])
def test_the_accelerator_device_function_takes_every_kind_that_cuda_takes(value):
    """`x.cuda(d)` where the rewrite cannot tell what `d` holds: the device `d` names, on
    DEVICE_TYPE, for an index, None (the current device), a device or a device's name."""
    target = targets.get("accelerator")
    namespace = {"torch": torch, "DEVICE_TYPE": "cpu", "d": value}
    for name in targets.base.definitions_used(target.definitions, target.device_function):
        if name != "DEVICE_TYPE":
            exec(target.definitions[name], namespace)
    device = eval(any_device_source(target, "d"), namespace)
    expected_index = value if value is None or isinstance(value, int) else torch.device(value).index
    assert (device.type, device.index) == ("cpu", expected_index)
    assert torch.ones(1).to(device).device.type == "cpu"


@pytest.mark.parametrize("name", [n for n in targets.names() if n != "accelerator"])
def test_without_a_device_function_any_value_is_spelled_as_an_index(name):
    target = targets.get(name)
    assert any_device_source(target, "d") == indexed_device_source(target, "d")


def test_a_device_function_must_be_a_function_the_target_defines():
    accelerator = targets.get("accelerator")
    with pytest.raises(ValueError, match="device function .* is not a function it defines"):
        dataclasses.replace(accelerator, device_function="DEVICE_TYPE")
    with pytest.raises(ValueError, match="must assign it or define it"):
        dataclasses.replace(accelerator, definitions={**accelerator.definitions, "helper": "print(1)"})
