"""A third-party finding, a library's scan, and full_unsupported_results.csv (Ascend's columns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from torchport.report.csv_table import write_table

HEADER = ("File", "3rd-party API", "Message")


@dataclass(frozen=True)
class ThirdPartyFinding:
    file: str  # the label, then the path inside the library: "timm/layers/foo.py"
    line: int  # 0: the finding is about the whole file (a CUDA source, a compiled CUDA library)
    api: str  # the CUDA API found: ".cuda()", 'device="cuda:0"', "torch.cuda.synchronize", ".cu"
    message: str  # where in the library, and what migrate and run can do about it


@dataclass
class LibraryScan:
    findings: list[ThirdPartyFinding] = field(default_factory=list)
    python_files: int = 0  # .py files seen
    parsed: int = 0  # of them, the ones that mention CUDA and were parsed
    unparseable: list[str] = field(default_factory=list)  # unreadable, or mention CUDA and do not parse


def write_third_party_csv(path: Path, findings: Iterable[ThirdPartyFinding]) -> None:
    """full_unsupported_results.csv, in the columns of Ascend's third_party report."""
    write_table(path, HEADER, ([f.file, f.api, _with_line(f)] for f in findings))


def _with_line(finding: ThirdPartyFinding) -> str:
    """The message, led by the line it is about (the CSV has no line column: Ascend's has none)."""
    return f"line {finding.line}: {finding.message}" if finding.line else finding.message

