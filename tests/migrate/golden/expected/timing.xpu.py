import torch


def timed(step):
    start = torch.xpu.Event(enable_timing=True)
    end = torch.xpu.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.xpu.synchronize()
    return start.elapsed_time(end)
