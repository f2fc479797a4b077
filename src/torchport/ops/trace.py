"""Read a profiler chrome trace (`prof.export_chrome_trace("trace.json")`, or the .json[.gz] that
torch.profiler.tensorboard_trace_handler writes) into ops.

Operator events are the complete events ("ph": "X") of category cpu_op whose name is an operator
("aten::addmm"). With record_shapes=True they carry "Input Dims" and "Input type", the source of
shapes and element types. Events nest in time on their thread: an op's caller is the nearest op
around it that is not CompositeImplicitAutograd (as in a capture, see opset). A trace cut short (a run killed while writing it) gives the
ops of the events before the cut, and says where it broke.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from torchport.ops import dtypes
from torchport.ops.kernels import KernelData
from torchport.ops.opset import OpSet

OPERATOR = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_]\w*$")
OP_CATEGORIES = {"cpu_op", "Operator", "operator"}
EPSILON = 1e-3  # microseconds: timestamps are printed with three decimals


@dataclass
class TraceResult:
    ops: OpSet
    events: int = 0
    with_shapes: bool = False
    problem: str | None = None  # where a cut-short trace broke


@dataclass(frozen=True)
class _Event:
    name: str
    start: float
    end: float
    shapes: list | None
    types: list | None


class NotATrace(ValueError):
    """The text is no chrome trace at all (the message says why)."""


def parse(text: str, data: KernelData) -> TraceResult:
    events, problem = _events(text)
    ops = OpSet()
    result = TraceResult(ops, problem=problem)
    for thread in _by_thread(events).values():
        for event, implicit, caller in _nested(thread, data):
            result.events += 1
            result.with_shapes |= event.shapes is not None
            if not implicit:
                ops.add(event.name, caller=caller, shapes=event.shapes, dtypes=_dtypes(event))
    return result


def _events(text: str) -> tuple[list[dict], str | None]:
    """The trace's events, and a problem if it had to be read up to a cut."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return _salvage(text, error)
    if isinstance(document, dict) and isinstance(document.get("traceEvents"), list):
        return document["traceEvents"], None
    if isinstance(document, list):  # the trace format allows a bare array of events
        return document, None
    raise NotATrace('valid JSON, but no chrome trace (no "traceEvents" list)')


def _salvage(text: str, error: json.JSONDecodeError) -> tuple[list[dict], str]:
    """The events that lie whole before the point where the JSON breaks."""
    found = re.search(r'"traceEvents"\s*:\s*\[', text) or re.match(r"\s*\[", text)
    where = f"invalid JSON at line {error.lineno} column {error.colno} ({error.msg})"
    if not found:
        raise NotATrace(f"not a chrome trace: {where}")
    decoder, events, index = json.JSONDecoder(), [], found.end()
    while True:
        index = _skip(text, index)
        try:
            event, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            break
        events.append(event)
    return events, f"{where}; read the {len(events)} events before it"


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n,":
        index += 1
    return index


def _by_thread(events: list) -> dict[tuple, list[_Event]]:
    threads: dict[tuple, list[_Event]] = {}
    for raw in events:
        event = _operator_event(raw)
        if event is not None:
            threads.setdefault((raw.get("pid"), raw.get("tid")), []).append(event)
    return threads


def _operator_event(raw: object) -> _Event | None:
    if not isinstance(raw, dict) or raw.get("ph") != "X" or raw.get("cat") not in OP_CATEGORIES:
        return None
    name, start, duration = raw.get("name"), raw.get("ts"), raw.get("dur", 0)
    if not isinstance(name, str) or not OPERATOR.match(name):
        return None
    if not isinstance(start, (int, float)) or not isinstance(duration, (int, float)):
        return None
    args = raw.get("args") if isinstance(raw.get("args"), dict) else {}
    shapes, types = args.get("Input Dims"), args.get("Input type")
    return _Event(
        name,
        float(start),
        float(start) + float(duration),
        shapes if isinstance(shapes, list) else None,
        types if isinstance(types, list) else None,
    )


def _nested(thread: list[_Event], data: KernelData):
    """Each event, whether no backend runs it (CompositeImplicitAutograd), and its caller: the
    nearest enclosing op on its thread that a backend runs ("" for none)."""
    thread.sort(key=lambda e: (e.start, -e.end))
    open_events: list[tuple[_Event, bool]] = []  # (event, implicit)
    for event in thread:
        while open_events and open_events[-1][0].end < event.end - EPSILON:
            open_events.pop()
        callers = [e.name for e, implicit in open_events if not implicit]
        implicit = data.is_implicit(event.name, _arities(event))
        yield event, implicit, callers[-1] if callers else ""
        open_events.append((event, implicit))


def _arities(event: _Event) -> set[int]:
    return {len(event.shapes)} if event.shapes is not None else set()


def _dtypes(event: _Event) -> list[str] | None:
    """Element types of the inputs with a dimension (0-dim ones are mostly Python numbers)."""
    if event.types is None:
        return None
    shapes = event.shapes or []
    found = set()
    for index, cpp_name in enumerate(event.types):
        dims = shapes[index] if index < len(shapes) else None
        dtype = dtypes.from_cpp(cpp_name) if isinstance(cpp_name, str) else None
        if dtype and isinstance(dims, list) and dims:
            found.add(dtype)
    return sorted(found)
