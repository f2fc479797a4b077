"""A training script from before Python 3.7 (`x.cuda(async=True)`) is distributed in the same
run that renames its `async=` arguments (TP024, on the tokens, before the steps parse it); only a
file whose pre-3.7 syntax no rewrite fixes (a name called `async`) is migrated without the steps,
with a row saying why."""

from pathlib import Path

from torchport import targets
from torchport.distribute import distribute_source
from torchport.migrate import migrate_source
from torchport.migrate.distributed import Request, distribute_then_migrate

PRE37 = Path(__file__).resolve().parents[1] / "fidelity" / "projects" / "pre37_imagenet.py"


def _migrate(data: bytes, name: str = PRE37.name, laid_out=None):
    return migrate_source(data, targets.get("cpu"), name, laid_out=laid_out)


def test_a_pre37_script_is_distributed_in_one_pass():
    data = PRE37.read_bytes()
    assert b"async=True" in data
    result = distribute_then_migrate(data, PRE37.name, Request(), _migrate)
    text = result.source.decode()
    assert result.distribution.distributed and result.distribution.entry
    assert "DistributedSampler" in text  # (compile below: no async= left in code)
    compile(text, PRE37.name, "exec")
    renamed = [f for f in result.findings if f.code == "TP024"]
    assert renamed and all(data.splitlines()[f.start_line - 1].count(b"async=") for f in renamed)


def test_running_it_again_changes_nothing():
    once = distribute_then_migrate(PRE37.read_bytes(), PRE37.name, Request(), _migrate).source
    assert distribute_then_migrate(once, PRE37.name, Request(), _migrate).source == once


def test_a_name_called_async_is_migrated_without_the_steps_with_a_row_saying_why():
    data = b"import torch\nasync = True\nfor x in data:\n    model(x).backward()\n    optimizer.step()\n"
    result = distribute_then_migrate(data, "old.py", Request(), lambda d, laid_out=None: _migrate(d, "old.py", laid_out))
    assert not result.distribution.distributed
    assert "pre-3.7" in result.distribution.left_alone and "rename it" in result.distribution.left_alone
