"""A training script from before Python 3.7 (`x.cuda(async=True)`) cannot be read by the
--distributed steps as it is: it is migrated as without --distributed, with a row saying what
to do, and what that migration writes can then be distributed."""

from pathlib import Path

from torchport import targets
from torchport.distribute import distribute_source
from torchport.findings import Operation
from torchport.migrate import migrate_source
from torchport.migrate.distributed import Request, distribute_then_migrate

PRE37 = Path(__file__).resolve().parents[1] / "fidelity" / "projects" / "pre37_imagenet.py"


def _migrate(data: bytes):
    return migrate_source(data, targets.get("cpu"), PRE37.name)


def test_a_pre37_script_is_migrated_with_a_row_saying_how_to_distribute_it():
    data = PRE37.read_bytes()
    result = distribute_then_migrate(data, PRE37.name, Request(), _migrate)
    assert result.source == _migrate(data).source
    rows = [f for f in result.findings if f.code == "TP200"]
    assert len(rows) == 1 and rows[0].operation is Operation.NOTE
    assert "pre-3.7" in rows[0].message and "migrate it without --distributed first" in rows[0].message
    assert not result.distribution.distributed


def test_what_its_migration_writes_can_be_distributed():
    migrated = _migrate(PRE37.read_bytes()).source.decode()
    distributed = distribute_source(migrated, PRE37.name)
    assert distributed.plan.entry and distributed.changed
    assert "DistributedSampler" in distributed.source
