"""Golden input -> output for every rule, on every target.

Each file in golden/ exercises one rule family; golden/expected/<name>.<target>.py is the reviewed
output. Migrating that output again must change nothing (idempotence).
"""

from pathlib import Path

import pytest

from torchport import targets
from torchport.migrate import migrate_source

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.py"))


@pytest.mark.parametrize("target", targets.names())
@pytest.mark.parametrize("case", CASES)
def test_golden_output(case, target):
    source = (GOLDEN / f"{case}.py").read_bytes()
    expected = (GOLDEN / "expected" / f"{case}.{target}.py").read_bytes()
    result = migrate_source(source, targets.get(target), f"{case}.py")
    assert result.error is None
    assert result.source.decode() == expected.decode()


@pytest.mark.parametrize("target", targets.names())
@pytest.mark.parametrize("case", CASES)
def test_migrating_the_output_again_changes_nothing(case, target):
    migrated = (GOLDEN / "expected" / f"{case}.{target}.py").read_bytes()
    again = migrate_source(migrated, targets.get(target), f"{case}.py")
    assert again.source == migrated
    assert not again.changed


def test_every_golden_case_has_an_expectation_per_target():
    expected = {p.name for p in (GOLDEN / "expected").glob("*.py")}
    assert expected == {f"{case}.{target}.py" for case in CASES for target in targets.names()}
