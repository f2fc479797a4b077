"""ops.json: the aten operators a run used, whichever source they were read from.

    {"schema": "torchport-ops/1",
     "source": {"kind": "profiler-table" | "chrome-trace" | "capture", "file": ..., ...},
     "ops": [{"name": "aten::addmm",            operator, with its namespace
              "count": 12,                      calls seen
              "top_level": 12,                  calls not made inside another op
              "callers": {"aten::mm": 2},       the others, by the op they were made inside (the
                                                nearest one a backend runs); both null when the
                                                source cannot tell (a printed table has no nesting)
              "overloads": ["default"],         null when the source names only the operator
              "shapes": [[[2, 36], [36, 5], ...]], distinct input shapes, one list per call form:
                                                a shape per argument, [] where it is no tensor (or
                                                a 0-dim one), a list of shapes for a tensor list
              "dtypes": ["float32"]}]}          element types of the inputs with a dimension (null:
                                                the source has none). 0-dim inputs are left out:
                                                they are mostly Python numbers, which every backend
                                                takes from the host.

Operators that are CompositeImplicitAutograd as a whole (aten::linear, aten::conv2d) are left out
by every source: no backend ever runs them, autograd rewrites them into the ops that are listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from torchport.errors import UsageError

SCHEMA = "torchport-ops/1"


@dataclass
class OpRecord:
    name: str
    count: int = 0
    top_level: int | None = 0
    callers: dict[str, int] | None = field(default_factory=dict)
    overloads: list[str] | None = field(default_factory=list)
    shapes: list = field(default_factory=list)
    dtypes: list[str] | None = field(default_factory=list)

    @property
    def packet(self) -> str:
        """'aten::addmm' -> 'addmm'."""
        return self.name.split("::", 1)[-1]

    @property
    def namespace(self) -> str:
        return self.name.split("::", 1)[0] if "::" in self.name else ""


class OpSet:
    """Ops by name, accumulated call by call (or row by row, for a table)."""

    def __init__(self) -> None:
        self.records: dict[str, OpRecord] = {}

    def add(
        self,
        name: str,
        count: int = 1,
        *,
        caller: str | None,
        overload: str | None = None,
        shapes: list | None = None,
        dtypes: list[str] | None = None,
    ) -> None:
        """`count` calls of `name`, made inside `caller` ("" for none: top-level; None when the
        source cannot tell); None for anything else the source does not say."""
        record = self.records.setdefault(name, OpRecord(name))
        record.count += count
        if caller is None or record.callers is None:
            record.top_level = record.callers = None
        elif caller:
            record.callers[caller] = record.callers.get(caller, 0) + count
        else:
            record.top_level += count
        record.overloads = _merged(record.overloads, None if overload is None else [overload])
        record.dtypes = _merged(record.dtypes, dtypes)
        if shapes is not None and shapes not in record.shapes:
            record.shapes.append(shapes)

    def names(self) -> set[str]:
        return set(self.records)

    def __iter__(self):
        return iter(sorted(self.records.values(), key=lambda r: (-r.count, r.name)))

    def __len__(self) -> int:
        return len(self.records)

    def to_json(self, source: dict) -> dict:
        return {"schema": SCHEMA, "source": source, "ops": [_record_json(r) for r in self]}


def _merged(known: list[str] | None, more: list[str] | None) -> list[str] | None:
    """Union of two sorted lists, None (unknown) once either side does not know."""
    if known is None or more is None:
        return None
    return sorted(set(known) | set(more))


def _record_json(record: OpRecord) -> dict:
    return {
        "name": record.name,
        "count": record.count,
        "top_level": record.top_level,
        "callers": record.callers,
        "overloads": record.overloads,
        "shapes": record.shapes,
        "dtypes": record.dtypes,
    }


def write(path: Path, ops: OpSet, source: dict) -> None:
    try:
        path.write_text(json.dumps(ops.to_json(source), indent=1) + "\n", encoding="utf-8")
    except OSError as error:
        raise UsageError(f"{path}: cannot write ({error.strerror or error})") from None


def read(path: Path) -> tuple[OpSet, dict]:
    """(the ops, the source) of an ops.json; a file that is not one is a UsageError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read ({getattr(error, 'strerror', None) or error})") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}: not an ops.json (invalid JSON at line {error.lineno}: {error.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("ops"), list):
        raise UsageError(f"{path}: not an ops.json (no \"schema\": \"{SCHEMA}\" with a list of \"ops\")")
    ops = OpSet()
    for number, entry in enumerate(data["ops"], 1):
        name = _entry_name(path, number, entry)
        ops.records[name] = _record(entry)
    return ops, data.get("source") or {}


def _entry_name(path: Path, number: int, entry: object) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(entry.get("count"), int):
        raise UsageError(f"{path}: op {number} has no \"name\" and \"count\"")
    return entry["name"]


def _record(entry: dict) -> OpRecord:
    return OpRecord(
        name=entry["name"],
        count=entry["count"],
        top_level=entry.get("top_level"),
        callers=entry.get("callers"),
        overloads=entry.get("overloads"),
        shapes=entry.get("shapes") or [],
        dtypes=entry.get("dtypes"),
    )
