import os
import platform
import types

import torch


def host_properties():
    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""
    if os.name == "nt":  # Windows
        import ctypes

        kilobytes = ctypes.c_ulonglong()
        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))
        memory = kilobytes.value * 1024
    else:  # Linux, macOS
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,
                                 total_memory=memory, multi_processor_count=os.cpu_count(),
                                 uuid=f"host-{platform.node()}")


def host_memory_info():
    """(free, total) bytes of the host's memory, as CUDA's mem_get_info() gives them for a GPU."""
    counts = getattr(os, "sysconf_names", {})
    if "SC_PHYS_PAGES" not in counts:
        return 0, 0
    page = os.sysconf("SC_PAGE_SIZE")
    total = page * os.sysconf("SC_PHYS_PAGES")
    return (page * os.sysconf("SC_AVPHYS_PAGES") if "SC_AVPHYS_PAGES" in counts else total), total


torch.manual_seed(0)
if torch.backends.mps.is_available():
    torch.mps.synchronize()
torch.mps.empty_cache()
n = torch.mps.device_count()
peak = 0.0
name = platform.processor()
props = host_properties()
free, total = host_memory_info()
graphed = torch.cuda.make_graphed_callables(model, (x,))
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = model(x)
g.replay()
torch.set_default_device("mps")
torch.set_default_tensor_type(torch.cuda.HalfTensor)
torch.set_default_device("mps")
torch.manual_seed(7)
x = 1; torch.mps.synchronize()
for i in range(2):
    # wait for the device
    torch.mps.synchronize()
# free memory before evaluating
torch.mps.empty_cache()
print("done")
torch.mps.empty_cache()
state = torch.mps.get_rng_state()
