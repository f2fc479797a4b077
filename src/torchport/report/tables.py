"""CSV reports in the columns that users of Ascend's msFmkTransplt already parse."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterable

from torchport.findings import Finding, Operation

CHANGE_COLUMNS = ["File", "Start Line", "End Line", "Operation Type", "Message", "Rule"]
API_COLUMNS = ["File", "Start Line", "End Line", "OP", "Tips"]
SKIPPED_COLUMNS = ["File", "Reason"]


def _write(path: Path, header: list[str], rows: Iterable[list]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def write_reports(directory: Path, findings: list[Finding], skipped: list[tuple[str, str]], summary: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    changes = [f for f in findings if f.operation.is_change]
    _write(
        directory / "change_list.csv",
        CHANGE_COLUMNS,
        ([f.file, f.start_line, f.end_line, f.operation.value, f.message, f.code] for f in changes),
    )
    for name, operation in (
        ("unsupported_api.csv", Operation.UNSUPPORTED),
        ("unknown_api.csv", Operation.UNKNOWN),
        ("notes.csv", Operation.NOTE),
    ):
        rows = ([f.file, f.start_line, f.end_line, f.api, f.message] for f in findings if f.operation is operation)
        _write(directory / name, API_COLUMNS, rows)
    _write(directory / "skipped_files.csv", SKIPPED_COLUMNS, ([path, reason] for path, reason in skipped))
    (directory / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
