"""The README's apex before/after is what the tool writes (a README that is true)."""

import re
from pathlib import Path

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.apex import NATIVE, convert_then_migrate

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(first_line: str) -> str:
    section = README.read_text().split("\n## apex\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(rf"```python\n{re.escape(first_line)}\n(.*?)```", section, re.S)
    assert found, first_line
    return found.group(1)


def test_the_readmes_cpu_after_is_what_migrate_writes_for_the_apex_script():
    before = _block("# train.py, written for apex")
    cpu = targets.get("cpu")
    result = convert_then_migrate(before.encode(), "train.py", NATIVE, cpu, lambda data: migrate_source(data, cpu, "train.py"))
    after = _block("# --target cpu (--target npu --apex native: the same with \"npu\", float16 and no CPU_BF16;")
    # (the block's second comment line goes on from its first)
    assert result.source.decode() == after.split("\n", 1)[1]
