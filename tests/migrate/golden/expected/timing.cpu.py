import time

import torch


class HostEvent:
    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.time = None

    def record(self, stream=None):
        self.time = time.perf_counter()

    def elapsed_time(self, end_event):
        return (end_event.time - self.time) * 1000

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True


def timed(step):
    start = time.perf_counter()
    step()
    end = time.perf_counter()
    return (end - start) * 1000


def timed_pair(step):
    start = time.perf_counter()
    step()
    end = time.perf_counter()
    return (end - start) * 1000


def per_step(steps):
    starts = [HostEvent(enable_timing=True) for _ in steps]
    ends = [HostEvent(enable_timing=True) for _ in steps]
    for i, step in enumerate(steps):
        starts[i].record()
        step()
        ends[i].record()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


class Timer:
    def __init__(self):
        self.start = HostEvent(enable_timing=True)
        self.end = HostEvent(enable_timing=True)

    def elapsed(self) -> float:
        self.end.record()
        return self.start.elapsed_time(self.end)


def recorded() -> HostEvent:
    event = HostEvent(enable_timing=True)
    event.record()
    return event


def since(begin):
    end = HostEvent(enable_timing=True)
    end.record()
    end.synchronize()
    return begin.elapsed_time(end)
