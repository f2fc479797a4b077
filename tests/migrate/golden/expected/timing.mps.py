import torch


def timed(step):
    start = torch.mps.Event(enable_timing=True)
    end = torch.mps.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.mps.synchronize()
    return start.elapsed_time(end)
