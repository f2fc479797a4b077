"""The verdicts of `ops check`, as a terminal table and as a CSV file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from torchport.errors import UsageError
from torchport.ops.check import Row, Verdict
from torchport.report.csv_table import write_table

CSV_COLUMNS = ["Op", "Count", "Verdict", "Why", "Target", "Top Level", "Callers", "Overloads", "Dtypes"]


def table(rows: list[Row]) -> str:
    """Op, count, verdict and why, in aligned columns."""
    lines = [("op", "count", "verdict", "why")]
    lines += [(r.op.name, str(r.op.count), r.verdict.value, r.why) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "\n".join(
        f"{op:<{widths[0]}}  {count:>{widths[1]}}  {verdict:<{widths[2]}}  {why}".rstrip()
        for op, count, verdict, why in lines
    )


def summary(rows: list[Row], target: str) -> str:
    counts = Counter(row.verdict for row in rows)
    said = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v])
    return f"torchport ops check [{target}]: {len(rows)} ops: {said or 'none'}"


def write_csv(path: Path, rows: list[Row], target: str) -> None:
    try:
        write_table(path, CSV_COLUMNS, ([
            r.op.name, r.op.count, r.verdict.value, r.why, target,
            "" if r.op.top_level is None else r.op.top_level,
            " ".join(f"{name}:{n}" for name, n in sorted((r.op.callers or {}).items())),
            " ".join(r.op.overloads or []), " ".join(r.op.dtypes or []),
        ] for r in rows))
    except OSError as error:
        raise UsageError(f"{path}: cannot write ({error.strerror or error})") from None
