import torch


def timed(step):
    start = torch.xpu.Event(enable_timing=True)
    end = torch.xpu.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.xpu.synchronize()
    return start.elapsed_time(end)


def timed_pair(step):
    start, end = torch.xpu.Event(enable_timing=True), torch.xpu.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def per_step(steps):
    starts = [torch.xpu.Event(enable_timing=True) for _ in steps]
    ends = [torch.xpu.Event(enable_timing=True) for _ in steps]
    for i, step in enumerate(steps):
        starts[i].record()
        step()
        ends[i].record()
    torch.xpu.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


class Timer:
    def __init__(self):
        self.start = torch.xpu.Event(enable_timing=True)
        self.end = torch.xpu.Event(enable_timing=True)

    def elapsed(self) -> float:
        self.end.record()
        torch.xpu.synchronize()
        return self.start.elapsed_time(self.end)


def recorded() -> torch.xpu.Event:
    event = torch.xpu.Event(enable_timing=True)
    event.record()
    return event


def since(begin):
    end = torch.xpu.Event(enable_timing=True)
    end.record()
    end.synchronize()
    return begin.elapsed_time(end)
