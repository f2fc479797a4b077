"""The README's Multi-card before/after is what the tool writes (a README that is true)."""

import re
from pathlib import Path

from torchport import targets
from torchport.migrate.distributed import Request, distribute_then_migrate
from torchport.migrate import migrate_source

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(after: str) -> str:
    section = README.read_text().split("## Multi-card", 1)[1]
    found = re.search(rf"```python\n{re.escape(after)}\n(.*?)```", section, re.S)
    assert found, after
    return found.group(1)


def test_the_readmes_npu_after_is_what_migrate_distributed_writes():
    before = _block("# train.py, as written for one GPU")
    npu = targets.get("npu")
    result = distribute_then_migrate(before.encode(), "train.py", Request(),
                                     lambda data, laid_out=None: migrate_source(data, npu, "train.py", laid_out=laid_out))
    assert result.source.decode() == _block("# --target npu --distributed")
