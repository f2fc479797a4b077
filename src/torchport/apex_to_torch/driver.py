"""One file's apex uses rewritten to native torch (CUDA's dialect), or the file pointed at the
stand-in package as a whole; the changes as report rows at the lines of the file as read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from torchport.findings import Finding

# A file that never says apex is not read at all.
MENTIONS_APEX = re.compile(rb"\bapex\b")


@dataclass
class Converted:
    source: str  # the file's source, rewritten (itself when nothing changed)
    findings: list[Finding] = field(default_factory=list)  # codes TP300-TP307, at the lines of the file as read
    # "native": apex rewritten to torch; "compat": the file imports torchport.compat.apex instead;
    # "": no apex use, or not valid Python to LibCST
    way: Literal["native", "compat", ""] = ""

    @property
    def changed(self) -> bool:
        return any(f.operation.is_change for f in self.findings)


def convert_source(source: str, path: str = "<string>") -> Converted:
    """`source` with its apex uses made native torch (in CUDA's dialect)."""
    return Converted(source)  # (skeleton: the conversion lands here)
