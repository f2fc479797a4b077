"""Read the table that `prof.key_averages(group_by_input_shape=True).table(...)` prints, wherever it
sits in a training log (Ascend's guide has users print it among the rest of their output).

A table is found by its rules: lines of dash runs two spaces apart, which give every column's
width, around a header with "Name" and "# of Calls". Lines of the log that carry a constant
prefix (a timestamp, "[rank0]: ") are read if the prefix is as long as the rule's. Rows whose
name is no operator (autograd nodes, "Optimizer.step#SGD.step", CUDA runtime calls) are skipped;
a name the table cut short ("aten::_scaled_dot_product_flash_atte...") is completed when one
aten operator starts so. A log with several tables (one per epoch) gives their sum.
The table has no nesting and no element types: `top_level`, `callers` and `dtypes` are null.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from torchport.ops.kernels import KernelData
from torchport.ops.opset import OpSet

RULE = re.compile(r"^(?P<prefix>.*?)(?P<rule>-{3,}(?: {2}-{3,})+) *$")
OPERATOR = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_]\w*$")
CUT = "..."


@dataclass
class TableResult:
    ops: OpSet
    tables: int = 0
    rows: int = 0
    problem: str | None = None  # a table the log ends in the middle of
    unresolved: list[str] = field(default_factory=list)  # names cut short, kept as printed


@dataclass(frozen=True)
class _Columns:
    prefix: int
    spans: list[tuple[int, int]]
    names: list[str]

    def cells(self, line: str) -> dict[str, str]:
        return {name: line[start:end].strip() for name, (start, end) in zip(self.names, self.spans)}


def parse(text: str, data: KernelData) -> TableResult:
    result = TableResult(OpSet())
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        columns = _header_at(lines, index)
        if columns is None:
            index += 1
            continue
        result.tables += 1
        index = _read_rows(lines, index + 3, columns, data, result)
    return result


def _header_at(lines: list[str], index: int) -> _Columns | None:
    """The columns of a table that starts at `index` (rule, header, rule), else None."""
    match = RULE.match(lines[index])
    if not match or index + 2 >= len(lines):
        return None
    start = len(match.group("prefix"))
    if lines[index + 2][start:].rstrip() != match.group("rule"):
        return None
    spans = [(start + m.start(), start + m.end()) for m in re.finditer(r"-+", match.group("rule"))]
    names = [lines[index + 1][a:b].strip() for a, b in spans]
    if "Name" not in names or "# of Calls" not in names:
        return None
    return _Columns(start, spans, names)


def _read_rows(lines: list[str], index: int, columns: _Columns, data: KernelData, result: TableResult) -> int:
    """Reads rows up to the closing rule; returns the index after it."""
    while index < len(lines):
        line = lines[index]
        if line[columns.prefix :].startswith("---"):
            return index + 1
        _add_row(columns.cells(line), data, result)
        index += 1
    result.problem = f"the table ends without its closing line (the log is cut short?); {len(result.ops)} ops read before"
    return index


def _add_row(cells: dict[str, str], data: KernelData, result: TableResult) -> None:
    name = _operator(cells.get("Name", ""), data, result)
    count = cells.get("# of Calls", "").replace(",", "")
    shapes = _shapes(cells.get("Input Shapes"))
    if name is None or not count.isdigit() or data.is_implicit(name, _arities(shapes)):
        return
    result.rows += 1
    result.ops.add(name, int(count), caller=None, shapes=shapes, dtypes=None)


def _operator(name: str, data: KernelData, result: TableResult) -> str | None:
    if name.endswith(CUT) and name.startswith("aten::"):
        stem = name[len("aten::") : -len(CUT)]
        found = [packet for packet in data.packets() if packet.startswith(stem)]
        if len(found) == 1:
            return f"aten::{found[0]}"
        result.unresolved.append(name)
        return None
    return name if OPERATOR.match(name) else None


def _arities(shapes: list | None) -> set[int]:
    return set() if shapes is None else {len(shapes)}


def _shapes(cell: str | None) -> list | None:
    """'[[2, 36], [36, 5], []]' -> the list; None if absent or cut short."""
    if not cell:
        return None
    try:
        shapes = json.loads(cell)
    except json.JSONDecodeError:
        return None
    return shapes if isinstance(shapes, list) else None
