"""TP021: on targets with no legacy typed classes (xpu, mps, and any added target without them), each use of `torch.cuda.FloatTensor`
and the rest is written without the class, and means there what the class meant on CUDA."""

import contextlib
import io
import sys
import types

import pytest
import torch

from _built_in_targets import BUILT_IN, added
from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.rules.legacy_types import LegacyTypeUseRule
from torchport.apis.legacy_types import LEGACY_DTYPES, legacy_tensor_types
from torchport.targets.surface import TORCH_SURFACE, names
from torchport.targets.verdict import Kind

SCRIPT = b'''import torch

x = torch.arange(4.0)
made = [torch.cuda.FloatTensor(2, 3), torch.cuda.LongTensor([1, 2]), torch.cuda.ByteTensor(x.size())]
converted = [x.type(torch.cuda.HalfTensor), x.type(torch.cuda.DoubleTensor, non_blocking=True),
             x.type(dtype=torch.cuda.BoolTensor)]
labels = torch.cuda.LongTensor([1, 0])
checks = [isinstance(labels, torch.cuda.LongTensor), isinstance(labels, torch.cuda.FloatTensor),
          isinstance(x, torch.cuda.FloatTensor) or isinstance(converted[0], torch.cuda.HalfTensor)]
print([(t.dtype, tuple(t.shape), t.device.type) for t in made + converted], checks)
'''


def _migrated(target: str) -> str:
    result = migrate_source(SCRIPT, targets.get(target), "legacy.py")
    assert result.error is None
    return result.source.decode()


def _output(source: str) -> str:
    """What the script prints, run here (torch is loaded already)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "legacy.py", "exec"), {"__name__": "__main__"})
    return printed.getvalue()


def test_the_dtypes_are_torchs_own():
    classes = [n for n in legacy_tensor_types(names(TORCH_SURFACE, "torch.cuda")) if n.endswith("Tensor")]
    assert sorted(LEGACY_DTYPES) == sorted(classes)
    assert all(str(getattr(torch, name).dtype) == dtype for name, dtype in LEGACY_DTYPES.items())


def _without_typed_classes(name: str) -> bool:
    """A device of its own, known before the script runs, and no class for torch.cuda.FloatTensor."""
    target = targets.get(name)
    return (target.has_device and target.device_type is not None
            and target.verdict("torch.cuda.FloatTensor").kind is Kind.UNSUPPORTED)


def test_the_rule_is_for_the_targets_without_typed_classes():
    having = {n for n in targets.names() if LegacyTypeUseRule.applies_to(targets.get(n))}
    assert having & set(BUILT_IN) == {"xpu", "mps"}
    assert having - set(BUILT_IN) == {n for n in added() if _without_typed_classes(n)}


def _the_rules_targets() -> list[str]:
    """xpu and mps, and any target added with no typed classes (the rule applies to each)."""
    return ["xpu", "mps", *(n for n in added() if _without_typed_classes(n))]


@pytest.mark.parametrize("target", _the_rules_targets())
def test_each_use_means_what_the_class_meant_on_its_device(target, monkeypatch):
    """The output on the target's device is the output of the CPU's real classes, on the CPU:
    run here with the device named "cpu", it prints what the cpu target's script prints."""
    migrated = _migrated(target)
    assert "torch.cuda" not in migrated
    on_this_host = migrated.replace(f'"{targets.get(target).device_type}"', '"cpu"')
    setup = targets.get(target).setup_import
    if setup:  # (a vendor's package, not installed here: only imported)
        monkeypatch.setitem(sys.modules, setup, types.ModuleType(setup))
    assert _output(on_this_host) == _output(_migrated("cpu"))


@pytest.mark.parametrize("target", _the_rules_targets())
def test_a_class_held_in_a_name_is_still_reported(target):
    result = migrate_source(b"import torch\nTensor = torch.cuda.FloatTensor\nx = Tensor(2)\n", targets.get(target), "t.py")
    assert [(f.code, f.operation.value) for f in result.findings] == [("TP004", "UNSUPPORTED")]


NAMED = b'''import torch

x = torch.arange(4.0)
half = x.type("torch.cuda.HalfTensor")
print(half.dtype, half.type() == "torch.cuda.HalfTensor", x.type() != 'torch.cuda.HalfTensor')
'''


def test_on_the_cpu_a_type_named_in_a_string_is_the_cpus_and_the_test_means_what_it_meant_on_cuda():
    """(x.type() of a CUDA half tensor is 'torch.cuda.HalfTensor': true there, so true here too)"""
    source = migrate_source(NAMED, targets.get("cpu"), "named.py").source.decode()
    assert "torch.cuda" not in source and '"torch.HalfTensor"' in source and "'torch.HalfTensor'" in source
    assert _output(source) == "torch.float16 True True\n"


def test_on_the_npu_a_type_named_in_a_string_is_the_npus():
    source = migrate_source(NAMED, targets.get("npu"), "named.py").source.decode()
    assert source.count("torch.npu.HalfTensor") == 3 and "torch.cuda" not in source


@pytest.mark.parametrize("target", ["xpu", "mps", "accelerator"])
def test_where_no_type_name_stands_for_it_each_string_is_reported(target):
    result = migrate_source(NAMED, targets.get(target), "named.py")
    assert result.source.decode().count("torch.cuda.HalfTensor") == 3
    assert sorted({(f.start_line, f.operation.value) for f in result.findings if f.api == "torch.cuda.HalfTensor"}) == [
        (4, "UNSUPPORTED"), (5, "UNSUPPORTED")]


def test_a_string_that_names_no_legacy_type_or_is_not_compared_is_left_alone():
    script = b'import torch\nname = "torch.cuda.HalfTensor"\nok = x.type() == "torch.cuda.Stream"\n'
    result = migrate_source(script, targets.get("cpu"), "t.py")
    assert result.source == script and not [f for f in result.findings if "HalfTensor" in f.api]
