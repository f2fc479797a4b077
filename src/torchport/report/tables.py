"""CSV reports in the columns that users of Ascend's msFmkTransplt already parse."""

from __future__ import annotations

import json
from pathlib import Path

from torchport.findings import Finding, Operation
from torchport.report.csv_table import write_table

CHANGE_COLUMNS = ["File", "Start Line", "End Line", "Operation Type", "Message", "Rule"]
API_COLUMNS = ["File", "Start Line", "End Line", "OP", "Tips"]
SKIPPED_COLUMNS = ["File", "Reason"]
ADVICE_COLUMNS = ["File", "Start Line", "End Line", "OP", "Advice"]
AFFINITY_COLUMNS = ["File", "Start Line", "End Line", "Api Type", "Api Call Name", "Affinity Api Name"]

# report file -> the operation whose findings it lists, and its columns
API_REPORTS = {
    "unsupported_api.csv": Operation.UNSUPPORTED,
    "unknown_api.csv": Operation.UNKNOWN,
    "notes.csv": Operation.NOTE,
}
ADVICE_REPORTS = {
    "api_precision_advice.csv": Operation.PRECISION,
    "api_performance_advice.csv": Operation.PERFORMANCE,
}
AFFINITY_REPORT = "affinity_api_call.csv"
DISTRIBUTED_REPORT = "distributed.csv"  # --distributed: what it changes and leaves, per file and line
NOT_SCANNED_REPORT = "not_scanned.csv"  # third-party: the imports it could not scan, per file and line
NOT_SCANNED_COLUMNS = ["File", "Start Line", "Import", "What", "Action"]


def write_reports(
    directory: Path, findings: list[Finding], skipped: list[tuple[str, str]], summary: dict, only: set[str] | None = None,
    distributed_codes: frozenset[str] = frozenset(),
) -> None:
    """Every report (or the ones named in `only`), then summary.json; with `distributed_codes`
    (--distributed's), also distributed.csv: the rows of those codes, changes and notes alike."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = (lambda name: True) if only is None else (lambda name: name in only)  # noqa: E731
    if wanted("change_list.csv"):
        changes = [f for f in findings if f.operation.is_change]
        write_table(
            directory / "change_list.csv",
            CHANGE_COLUMNS,
            ([f.file, f.start_line, f.end_line, f.operation.value, f.message, f.code] for f in changes),
        )
    for reports, columns in ((API_REPORTS, API_COLUMNS), (ADVICE_REPORTS, ADVICE_COLUMNS)):
        for name, operation in reports.items():
            if wanted(name):
                rows = ([f.file, f.start_line, f.end_line, f.api, f.message] for f in findings if f.operation is operation)
                write_table(directory / name, columns, rows)
    if wanted(AFFINITY_REPORT):
        rows = (
            [f.file, f.start_line, f.end_line, f.category, f.api, f.replacement]
            for f in findings
            if f.operation is Operation.AFFINITY
        )
        write_table(directory / AFFINITY_REPORT, AFFINITY_COLUMNS, rows)
    if distributed_codes and wanted(DISTRIBUTED_REPORT):
        write_table(
            directory / DISTRIBUTED_REPORT,
            CHANGE_COLUMNS,
            ([f.file, f.start_line, f.end_line, f.operation.value, f.message, f.code] for f in findings if f.code in distributed_codes),
        )
    if wanted("skipped_files.csv"):
        write_table(directory / "skipped_files.csv", SKIPPED_COLUMNS, ([path, reason] for path, reason in skipped))
    (directory / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
