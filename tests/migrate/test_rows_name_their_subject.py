"""Every row of notes.csv and the other API reports names what it is about in its OP column,
the rows of --distributed and of the apex conversion about a whole file too."""

from pathlib import Path

from torchport.migrate.distributed import Request
from torchport.migrate.workers import Choices, Job, migrate_one

ROOT = Path(__file__).resolve().parents[2]
# (files whose rows include ones about a whole file: a script distributed already, one with an
# index --distributed drops, apex kept on npu or left to the stand-in)
# (--distributed only where its rows are the point: it re-reads a file after each of its steps)
FILES = [(ROOT / "examples" / name, Request()) for name in ("ddp_train.py", "transformer_checkpoint.py")] + [
    (ROOT / "examples" / "amp_classifier.py", None)] + [
    (ROOT / "tests/fidelity/apex_projects/projects" / name, None) for name in ("plain_o1.py", "fused_optimizers.py")]


def test_no_report_row_has_an_empty_op():
    unnamed = []
    for path, distribute in FILES:
        result = migrate_one(Job(path.name, path.read_bytes()), Choices("cpu", distribute=distribute))
        unnamed += [(path.name, f.start_line, f.code, f.message) for f in result.findings
                    if not f.operation.is_change and not f.api]
    assert unnamed == []
