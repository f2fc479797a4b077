"""--select / --ignore / --extend-select: a rule that is off neither changes code nor writes rows."""

from __future__ import annotations

import argparse

import pytest

from torchport.errors import UsageError
from torchport.migrate.selection import RuleSelection, add_rule_selection_arguments, rule_selection_from
from torchport.migrate.workers import Choices, Job, migrate_one

SOURCE = b"""import torch

x = torch.zeros(1).cuda()
torch.cuda.synchronize()
y = torch.zeros(1, device="cuda")
"""


def _selection(*argv: str) -> RuleSelection:
    parser = argparse.ArgumentParser()
    add_rule_selection_arguments(parser)
    return rule_selection_from(parser.parse_args(argv))


def _rows(*argv: str):
    result = migrate_one(Job("t.py", SOURCE), Choices("npu", rules=_selection(*argv)))
    return result.source.decode(), sorted({f.code for f in result.findings})


def test_every_rule_runs_by_default():
    assert _rows() == (_rows()[0], ["TP000", "TP001", "TP003", "TP004"])


def test_an_ignored_rule_neither_changes_code_nor_writes_rows():
    code, codes = _rows("--ignore", "TP003")
    assert "x = torch.zeros(1).cuda()" in code and "torch.npu.synchronize()" in code
    assert codes == ["TP000", "TP001", "TP004"]


def test_select_runs_only_the_rules_it_names_and_the_imports_they_need():
    code, codes = _rows("--select", "TP003")
    assert codes == ["TP000", "TP003"]
    assert "torch.cuda.synchronize()" in code and 'device="cuda"' in code and ".npu()" in code


def test_extend_select_adds_to_select_and_ignore_takes_out_again():
    assert _rows("--select", "TP003", "--extend-select", "TP004")[1] == ["TP000", "TP003", "TP004"]
    assert _rows("--select", "TP0", "--ignore", "TP001,TP004")[1] == ["TP000", "TP003"]


def test_the_more_specific_prefix_wins_and_a_tie_goes_to_ignore():
    chosen = _selection("--ignore", "TP0", "--select", "TP003")
    assert chosen.allows("TP003") and not chosen.allows("TP004") and not chosen.allows("TP101")
    assert not _selection("--select", "TP003", "--ignore", "TP003").allows("TP003")
    assert _selection("--select", "ALL", "--ignore", "TP1").allows("TP025")
    assert not _selection("--select", "all", "--ignore", "TP1").allows("TP117")


def test_prefixes_are_checked_and_a_configuration_value_too():
    with pytest.raises(UsageError, match="'TP99' is no rule code"):
        _selection("--select", "TP99")
    config = argparse.Namespace(select="TP0, TP11", ignore=["TP003"], extend_select=None)
    assert rule_selection_from(config) == RuleSelection(("TP0", "TP11"), ("TP003",))


def test_ignoring_the_apex_codes_leaves_apex_as_it_is():
    source = b"import torch\nfrom apex import amp\nmodel, opt = amp.initialize(model, opt, opt_level='O1')\n"
    converted = migrate_one(Job("t.py", source), Choices("cpu"))
    kept = migrate_one(Job("t.py", source), Choices("cpu", rules=_selection("--ignore", "TP3")))
    assert converted.source != source and any(f.code.startswith("TP30") for f in converted.findings)
    assert kept.source == source and not any(f.code.startswith("TP3") for f in kept.findings)
