"""A new rule is one new file: dropped into the rules package of a copy of torchport, it runs in
migrate's pass, its row reaches the reports, its sample sets it off, and the README table is
written from it by tools/rule_table.py (no edit to any other file)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NEW_RULE = '''\
"""TP999: `torch.cuda.ipc_collect()`, noted (a throw-away rule of the test that adds one)."""

import libcst as cst

from torchport.findings import Operation
from torchport.migrate.rules.base.rule import ApiReferenceRule

IPC_COLLECT = "torch.cuda.ipc_collect"


class IpcCollectNote(ApiReferenceRule):
    """Notes every reference to torch.cuda.ipc_collect."""

    code = "TP999"
    order = 225
    mentions = rb"ipc_collect"
    prefix = IPC_COLLECT
    reads = (IPC_COLLECT,)
    title = "ipc collect"
    readme = """`torch.cuda.ipc_collect()` noted for a person to judge"""
    sample = "import torch\\ntorch.cuda.ipc_collect()\\n"

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if api == IPC_COLLECT:
            self.report(node, Operation.NOTE, f"ipc_collect on {self.target.name}: judge it", api=api)
'''

SCRIPT = "import torch\n\nx = torch.zeros(2).cuda()\ntorch.cuda.ipc_collect()\n"


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """A copy of torchport's source, README and rule-table tool, with the one new rule file."""
    root = tmp_path_factory.mktemp("torchport_copy")
    shutil.copytree(ROOT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "README.md", root / "README.md")
    (root / "src" / "torchport" / "migrate" / "rules" / "ipc_collect.py").write_text(NEW_RULE)
    return root


def _run(copy: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy / "src")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_the_new_file_is_a_rule_in_its_place_and_its_sample_sets_it_off(copy):
    probe = _run(copy, "-c", (
        "from torchport.migrate.rules import RULES\n"
        "from torchport.migrate import migrate_source\n"
        "from torchport import targets\n"
        "names = [r.__name__ for r in RULES]\n"
        "print(names[names.index('IpcCollectNote') - 1], names[names.index('IpcCollectNote') + 1])\n"
        "rule = RULES[names.index('IpcCollectNote')]\n"
        "print(sorted({f.code for f in migrate_source(rule.sample.encode(), targets.get('npu')).findings}))\n"))
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines()[0].split() == ["CudaBuildVersionRule", "UnusedGpuHintRule"]  # order 225: between 220 and 230
    assert "'TP999'" in probe.stdout.splitlines()[1]


def test_migrate_applies_it_beside_the_other_rules(copy, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(SCRIPT)
    done = _run(copy, "-m", "torchport", "migrate", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--target", "cpu")
    assert done.returncode == 0, done.stderr
    assert "x = torch.zeros(2).cpu()" in (tmp_path / "out" / "train.py").read_text()
    reports = tmp_path / "out"
    rows = [row for report in reports.rglob("*.csv") for row in csv.DictReader(report.open(encoding="utf-8"))]
    assert any("ipc_collect on cpu: judge it" in " ".join(row.values()) for row in rows)


def test_the_readme_table_is_written_from_the_registry(copy):
    stale = _run(copy, "tools/rule_table.py", "--check", cwd=copy)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    written = _run(copy, "tools/rule_table.py", cwd=copy)
    assert written.returncode == 0, written.stderr
    assert "| TP999 | `torch.cuda.ipc_collect()` noted for a person to judge |" in (copy / "README.md").read_text()
    assert _run(copy, "tools/rule_table.py", "--check", cwd=copy).returncode == 0
