import torch


def timed(step):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def timed_pair(step):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def per_step(steps):
    starts = [torch.cuda.Event(enable_timing=True) for _ in steps]
    ends = [torch.cuda.Event(enable_timing=True) for _ in steps]
    for i, step in enumerate(steps):
        starts[i].record()
        step()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


class Timer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def elapsed(self) -> float:
        self.end.record()
        torch.cuda.synchronize()
        return self.start.elapsed_time(self.end)


def recorded() -> torch.cuda.Event:
    event = torch.cuda.Event(enable_timing=True)
    event.record()
    return event


def since(begin):
    end = torch.cuda.Event(enable_timing=True)
    end.record()
    end.synchronize()
    return begin.elapsed_time(end)
