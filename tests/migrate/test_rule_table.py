"""The README's rule table lists exactly the rules that run, and every rule says what it does."""

import re
from pathlib import Path

from torchport.migrate.rules import RULES
from torchport.migrate.source import IMPORT_CODE

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| (TP\d{3}) \| (.+) \|$", re.MULTILINE)


def test_the_readme_rule_table_lists_every_rule_and_nothing_else():
    listed = [code for code, _ in ROW.findall(README.read_text())]
    assert listed == sorted(listed), "rows in code order"
    assert set(listed) == {rule.code for rule in RULES} | {IMPORT_CODE}


def test_every_rule_has_its_own_code_a_title_and_a_docstring():
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes))
    assert all(rule.title and (rule.__doc__ or "").strip() for rule in RULES)


def test_every_rule_declares_the_text_it_reacts_to():
    """The pre-filter is the union of these: a rule without one would make every file parse."""
    import re

    for rule in RULES:
        assert rule.mentions and not re.compile(rule.mentions).search(b"import torch\nx = 1\n"), rule.code
