"""The one CSV writer: every CSV that torchport writes (migrate's reports, `ops check`, `shapes`,
`analyze --mode third-party`) is a header and rows in one dialect, so that a script that reads one
reads them all."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Sequence


def write_table(path: str | Path, header: Sequence[str], rows: Iterable[Sequence]) -> None:
    """`header`, then `rows`, to `path`: UTF-8, csv's default dialect (minimal quoting, "\\r\\n"
    line ends), and newline="" so that a newline inside a field is written as it is."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
