"""Ops from a profiler output file: a chrome trace (JSON, or gzipped JSON) or a log with a table.

The kind is told by the content, not the name: JSON starts with `{` (or `[{`, an array of events). Whatever cannot be
read is a UsageError naming the file; a file read only in part (a trace or table cut short)
gives its ops with `problem` set, so the caller writes them and then reports the problem.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from torchport.errors import UsageError
from torchport.ops import table, trace
from torchport.ops.kernels import KernelData
from torchport.ops.opset import OpSet

# a JSON object, or an array of events; not a log whose lines start "[rank0]: "
JSON_START = re.compile(r"\s*(\{|\[\s*[{\]])")


@dataclass
class Extracted:
    ops: OpSet
    source: dict
    problem: str | None = None


def extract(path: Path, data: KernelData) -> Extracted:
    text = read_text(path)
    if not text.strip():
        raise UsageError(f"{path}: empty file")
    if JSON_START.match(text):
        return _from_trace(path, text, data)
    return _from_table(path, text, data)


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, not a profiler file") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read ({error.strerror or error})") from None
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw)
    return raw.decode("utf-8", errors="replace")


def _gunzip(path: Path, raw: bytes) -> bytes:
    """A gzipped trace; one cut short gives what decompresses before the cut."""
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error):
        return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(raw)


def _from_trace(path: Path, text: str, data: KernelData) -> Extracted:
    try:
        result = trace.parse(text, data)
    except trace.NotATrace as error:
        raise UsageError(f"{path}: {error}") from None
    if not result.events:
        said = f"; {result.problem}" if result.problem else ""
        raise UsageError(f"{path}: a chrome trace without operator events (recorded without CPU activity?){said}")
    source = {"kind": "chrome-trace", "file": str(path), "events": result.events, "record_shapes": result.with_shapes}
    return Extracted(result.ops, source, f"{path}: {result.problem}" if result.problem else None)


def _from_table(path: Path, text: str, data: KernelData) -> Extracted:
    result = table.parse(text, data)
    if not result.tables:
        raise UsageError(
            f"{path}: no profiler table in it (looked for the 'Name ... # of Calls' header that "
            "key_averages().table() prints)"
        )
    if not result.rows and not result.problem:
        raise UsageError(f"{path}: a profiler table without operator rows")
    source = {"kind": "profiler-table", "file": str(path), "tables": result.tables, "rows": result.rows}
    if result.unresolved:
        source["names_cut_short"] = result.unresolved
    problem = f"{path}: {result.problem}" if result.problem else None
    return Extracted(result.ops, source, problem)
