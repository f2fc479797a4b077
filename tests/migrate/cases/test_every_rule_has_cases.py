"""Every rule in the registry is specified by fixture cases: a rule that changes code by at least two
(its input and output per target), an advice rule by at least one that asserts its row.

The rules come from `RULES` (their `code`), the cases from the test modules beside this one (their
`CODE` or `CODES`): neither is found by a rule's file name. A case counts for a rule only if it
exercises it: migrating the case writes a row of that rule on at least one target (a case of where
the rule must not act is welcome, and does not count).
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from _fixture_cases import migrated
from torchport import targets
from torchport.migrate.rules import RULES

HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def case_modules() -> tuple:
    names = sorted(p.stem for p in HERE.glob("test_tp*.py"))
    return tuple(importlib.import_module(name) for name in names)


def codes_of(module) -> tuple[str, ...]:
    return (module.CODE,) if hasattr(module, "CODE") else tuple(module.CODES)


def cases_of(module):
    """(kind, case, apply_affinity) for each case in the module."""
    for kind, apply_affinity in (("CASES", False), ("APPLIED", True), ("ROWS", False)):
        for case in getattr(module, kind, []):
            yield kind, case, apply_affinity


def rows_written(source: str, apply_affinity: bool) -> list:
    return [f for target in targets.names() for f in migrated(source, target, apply_affinity).findings]


@lru_cache(maxsize=None)
def census() -> tuple[dict, dict, set]:
    """Per code: the cases that exercise it, the row cases that assert one of its rows; and the codes
    that some case shows changing code."""
    exercised, asserted, changing = defaultdict(list), defaultdict(list), set()
    for module in case_modules():
        codes = codes_of(module)
        for kind, case, apply_affinity in cases_of(module):
            source, expected = case.values
            found = rows_written(source, apply_affinity)
            changing.update(f.code for f in found if f.operation.is_change)
            for code in codes:
                if any(f.code == code for f in found):
                    exercised[code].append(case.id)
                if kind == "ROWS" and any(row[0] == code for rows in expected.values() for row in rows):
                    asserted[code].append(case.id)
    return exercised, asserted, changing


def test_every_case_module_names_rules_that_exist():
    known = {rule.code for rule in RULES}
    for module in case_modules():
        assert set(codes_of(module)) <= known, module.__name__


def test_every_rule_that_changes_code_has_two_cases_and_every_advice_rule_a_row():
    exercised, asserted, changing = census()
    missing = []
    for rule in RULES:
        code = rule.code
        if not exercised[code]:
            missing.append(f"{code} ({rule.__name__}): no case exercises it")
        elif code in changing:
            if len(exercised[code]) < 2:
                missing.append(f"{code} ({rule.__name__}) changes code: {len(exercised[code])} case(s), 2 wanted")
        elif not asserted[code]:
            missing.append(f"{code} ({rule.__name__}): no case asserts its row (code, line)")
    assert missing == []

