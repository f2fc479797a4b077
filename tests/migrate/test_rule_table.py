"""The rules are found in their package, in the order they always ran, each declaring what is kept
about it; the README's rule table is the registry's, as tools/rule_table.py writes it."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from torchport.migrate.rules import RULES
from torchport.migrate.rules.base.registry import discover
from torchport.migrate.codes import IMPORT_CODE

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (TP\d{3}) \| (.+) \|$", re.MULTILINE)

# The order the rules ran in when they were listed by hand (the fixes of two rules on one node
# compose in this order): a new rule may slot in anywhere, but these keep their places.
ORDER_BEFORE_THE_REGISTRY = [
    "AsyncKeywordRule", "DeviceLiteralRule", "DeviceComparisonRule", "DeviceIndexRule", "CudaMethodRule",
    "CheckpointLocationRule", "CudaApiRule", "LegacyTypeUseRule", "AmpRule", "DistributedBackendRule",
    "DdpDeviceIdsRule", "VisibleDevicesRule", "CudnnFlagRule", "HostTimingRule", "IsAvailableRule", "IsCudaRule",
    "RecordStreamRule", "SyncBatchNormRule", "PinMemoryRule", "ProfilerActivityRule", "ProfilerModuleRule",
    "CudaBuildVersionRule", "UnusedGpuHintRule", "SetupImportRule", "DataParallelOnOneDevice",
    "UnknownTorchApiRule", "ApiKernelRule",
    "MixedPrecisionAdvice", "Float64Advice", "DataParallelAdvice", "SpawnAdvice", "BroadcastBuffersAdvice",
    "NonBlockingAdvice", "LaunchEnvironmentAdvice",
    "OptimizerAffinity", "ClipGradAffinity", "AttentionAffinity", "RmsNormAffinity", "RotaryEmbeddingAffinity",
    "SwigluAffinity", "GeluTanhAffinity", "ApexAdvice",
]


def _rule_table_tool():
    spec = importlib.util.spec_from_file_location("rule_table", ROOT / "tools" / "rule_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_rule_table_is_the_registrys():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _rule_table_tool().with_table(readme) == readme, "README.md's rule table is out of date: run tools/rule_table.py"


def test_the_table_lists_every_rule_once_in_code_order():
    listed = [code for code, _ in ROW.findall(_rule_table_tool().table())]
    assert listed == sorted(set(listed))
    assert set(listed) == {rule.code for rule in RULES} | {IMPORT_CODE}


def test_a_stale_row_is_written_anew_and_the_check_fails_on_it(monkeypatch, tmp_path):
    tool = _rule_table_tool()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stale = readme.replace("| TP006 | ", "| TP006 | (old text) ", 1)
    assert stale != readme and tool.with_table(stale) == readme
    copy = tmp_path / "README.md"
    copy.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(tool, "README", copy)
    assert tool.main(["--check"]) == 1 and copy.read_text(encoding="utf-8") == stale
    assert tool.main([]) == 0 and copy.read_text(encoding="utf-8") == readme


def test_the_registry_keeps_the_order_the_rules_always_ran_in():
    assert [rule.__name__ for rule in RULES if rule.__name__ in ORDER_BEFORE_THE_REGISTRY] == ORDER_BEFORE_THE_REGISTRY


def test_every_rule_has_its_own_code_a_title_a_docstring_a_row_and_a_sample():
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes))
    for rule in RULES:
        assert rule.title and (rule.__doc__ or "").strip(), rule.code
        assert rule.readme.strip() and "|" not in rule.readme, rule.code  # (a | would split the table's row)
        assert rule.sample.endswith("\n"), rule.code


def test_every_rule_declares_the_text_it_reacts_to():
    """The pre-filter is the union of these: a rule without one would make every file parse."""
    for rule in RULES:
        assert rule.mentions and not re.compile(rule.mentions).search(b"import torch\nx = 1\n"), rule.code


RULE_FILE = '''
from torchport.migrate.rules.base.rule import Rule


class {name}(Rule):
    """A rule written for this test."""

    code = "{code}"
    order = {order}
    title = "a test rule"
'''


def _package(tmp_path: Path, name: str, rules: dict[str, tuple[str, str, int]]) -> Path:
    folder = tmp_path / name
    (folder / "base").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "base" / "__init__.py").write_text("from torchport.migrate.rules.base.rule import Rule\n\n\nclass Hidden(Rule):\n    code = 'TP999'\n")
    for module, (rule, code, order) in rules.items():
        (folder / f"{module}.py").write_text(RULE_FILE.format(name=rule, code=code, order=order))
    (folder / "helpers.py").write_text("SHARED = 1\n")  # (a module without rules is read, and adds none)
    return folder


def _discover(tmp_path, monkeypatch, name, rules):
    folder = _package(tmp_path, name, rules)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        return discover(name, [str(folder)])
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


def test_a_new_rule_is_one_new_file_placed_by_its_order(tmp_path, monkeypatch):
    found = _discover(tmp_path, monkeypatch, "rules_a", {
        "second": ("SecondRule", "TP901", 20), "first": ("FirstRule", "TP902", 10), "late": ("LateRule", "TP903", 15),
    })
    assert [rule.__name__ for rule in found] == ["FirstRule", "LateRule", "SecondRule"]  # (not the files' order)


@pytest.mark.parametrize(("rules", "says"), [
    ({"a": ("ARule", "TP901", 10), "b": ("BRule", "TP902", 10)}, "rules with the same order: ARule (10), BRule (10)"),
    ({"a": ("ARule", "TP901", 10), "b": ("BRule", "TP901", 20)}, "rules with the same code: ARule (TP901), BRule (TP901)"),
    ({"a": ("ARule", "TP901", 0)}, "rules without an order: ARule"),
])
def test_rules_that_clash_or_have_no_place_are_refused_by_name(tmp_path, monkeypatch, rules, says):
    with pytest.raises(ValueError) as raised:
        _discover(tmp_path, monkeypatch, f"rules_{abs(hash(says))}", rules)
    assert str(raised.value) == says
