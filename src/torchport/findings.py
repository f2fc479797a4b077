"""What a rule found: one row of a report (migrate makes findings, report writes them: both
import this module, which imports neither)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple


class Operation(str, Enum):
    INSERT = "INSERT"
    MODIFY = "MODIFY"
    DELETE = "DELETE"
    UNSUPPORTED = "UNSUPPORTED"  # the target lacks it: a person must port it (unsupported_api.csv)
    UNKNOWN = "UNKNOWN"  # a CUDA name no rule understands: left as is (unknown_api.csv)
    NOTE = "NOTE"  # left as is on purpose, e.g. a flag that has no effect on the target
    PRECISION = "PRECISION"  # the line computes differently (or not at all) on the target (api_precision_advice.csv)
    PERFORMANCE = "PERFORMANCE"  # the line runs, but slower than it could (api_performance_advice.csv)
    AFFINITY = "AFFINITY"  # a faster API the target has for what the line does (affinity_api_call.csv)

    @property
    def is_change(self) -> bool:
        return self in (Operation.INSERT, Operation.MODIFY, Operation.DELETE)


@dataclass(frozen=True)
class Finding:
    file: str
    start_line: int
    end_line: int
    code: str  # the rule's code, e.g. TP004
    operation: Operation
    message: str  # for changes: what was done; otherwise: the API and what to do
    api: str = ""  # the CUDA API concerned, when there is one
    replacement: str = ""  # AFFINITY: the faster API
    category: str = ""  # AFFINITY: what kind of API ("optimizer", "function", "pattern")


class Code(NamedTuple):
    """A report code of a rewriting step (--distributed, the apex and NPU conversions, --amp), declared
    once: the rows carry `code`, the terminal summary prints `title`, and `subject` is what a row of
    the code is about where the row names no API of its own (its OP column; "" where none)."""
    code: str
    title: str
    subject: str = ""


def titles(codes: Iterable[Code]) -> dict[str, str]:
    return {c.code: c.title for c in codes}


def subjects(codes: Iterable[Code]) -> dict[str, str]:
    return {c.code: c.subject for c in codes}
