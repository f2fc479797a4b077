"""TP010: CUDA timing events, however a script holds them, time with the host clock where the
target has no events; the migrated code is run here, on a clock that ticks 1 ms per reading."""

import itertools
import time

import pytest

from torchport import targets
from torchport.findings import Operation
from torchport.migrate import migrate_source

HOST_TIMING = [name for name in targets.names() if targets.get(name).host_timing]

SOURCE = """\
import torch


def pair(step):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def listed(steps):
    starts = [torch.cuda.Event(enable_timing=True) for _ in steps]
    ends = [torch.cuda.Event(enable_timing=True) for _ in steps]
    for i, step in enumerate(steps):
        starts[i].record()
        step()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def in_a_dict(step):
    marks = {"step": (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))}
    marks["step"][0].record()
    step()
    marks["step"][1].record()
    marks["step"][1].synchronize()
    return marks["step"][0].elapsed_time(marks["step"][1])


class Timer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def time(self, step):
        self.start.record()
        step()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


def recorded():
    event = torch.cuda.Event(enable_timing=True)
    event.record()
    return event


def since(begin):
    end = torch.cuda.Event(enable_timing=True)
    end.record()
    return begin.elapsed_time(end)
"""


@pytest.fixture
def migrated(monkeypatch):
    """Migrate SOURCE for a target and run it, on a clock that reads 0, 1 ms, 2 ms, ..."""
    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) / 1000)

    def run(target: str) -> tuple[dict, list]:
        result = migrate_source(SOURCE.encode(), targets.get(target), "timing.py")
        assert result.error is None and b"torch.cuda" not in result.source
        namespace = {}
        exec(compile(result.source, "timing.py", "exec"), namespace)
        return namespace, result.findings

    return run


@pytest.mark.parametrize("target", HOST_TIMING)
def test_events_bound_in_a_tuple_become_clock_readings(migrated, target):
    namespace, _ = migrated(target)
    assert namespace["pair"](lambda: None) == pytest.approx(1.0)


@pytest.mark.parametrize("target", HOST_TIMING)
def test_events_in_lists_dicts_and_attributes_become_host_events(migrated, target):
    namespace, findings = migrated(target)
    assert namespace["listed"]([lambda: None] * 3) == pytest.approx([1.0, 1.0, 1.0])
    assert namespace["in_a_dict"](lambda: None) == pytest.approx(1.0)
    assert namespace["Timer"]().time(lambda: None) == pytest.approx(1.0)
    assert not [f for f in findings if f.operation is Operation.UNSUPPORTED]


@pytest.mark.parametrize("target", HOST_TIMING)
def test_an_event_timed_against_one_passed_in_is_a_host_event_too(migrated, target):
    namespace, _ = migrated(target)
    assert namespace["since"](namespace["recorded"]()) == pytest.approx(1.0)


def test_only_events_bound_to_plain_names_become_clock_readings():
    migrated = migrate_source(SOURCE.encode(), targets.get("cpu"), "timing.py").source.decode()
    assert "    start = time.perf_counter()\n" in migrated and "return (end - start) * 1000" in migrated
    assert "starts = [HostEvent(enable_timing=True) for _ in steps]" in migrated
    assert "self.start = HostEvent(enable_timing=True)" in migrated
    assert "end = HostEvent(enable_timing=True)" in migrated  # (timed against `begin`, an event passed in)


def test_a_target_with_events_of_its_own_keeps_them():
    migrated = migrate_source(SOURCE.encode(), targets.get("npu"), "timing.py").source.decode()
    assert "HostEvent" not in migrated and "torch.npu.Event(enable_timing=True)" in migrated
