"""The layers import downwards only: no module below the CLI imports it, report imports no migrate code."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "torchport"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_module_imports_the_cli():
    offenders = [p.name for p in SRC.rglob("*.py") if p.name not in ("cli.py", "__main__.py") and "torchport.cli" in _imports(p)]
    assert offenders == []


def test_report_imports_no_migrate_module():
    for path in (SRC / "report").rglob("*.py"):
        assert not [m for m in _imports(path) if m.startswith("torchport.migrate")], path.name
