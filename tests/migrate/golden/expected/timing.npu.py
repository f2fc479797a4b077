import torch
import torch_npu


def timed(step):
    start = torch.npu.Event(enable_timing=True)
    end = torch.npu.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.npu.synchronize()
    return start.elapsed_time(end)
