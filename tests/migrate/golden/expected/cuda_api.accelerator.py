import os
import platform
import types

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch


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


def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


torch.manual_seed(0)
if torch.accelerator.is_available():
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
n = (torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count())
peak = (torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 2**20
name = DEVICE_TYPE
props = (torch.get_device_module(DEVICE_TYPE).get_device_properties(0) if torch.accelerator.is_available() else host_properties())
free, total = (torch.accelerator.get_memory_info() if torch.accelerator.is_available() else host_memory_info())
graphed = torch.cuda.make_graphed_callables(model, (x,))
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = model(x)
g.replay()
torch.set_default_device(DEVICE_TYPE)
torch.set_default_tensor_type(TENSOR_TYPES.HalfTensor)
torch.set_default_device(DEVICE_TYPE)
torch.manual_seed(7)
x = 1; (torch.accelerator.synchronize() if torch.accelerator.is_available() else None)
for i in range(2):
    # wait for the device
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
# free memory before evaluating
if torch.accelerator.is_available():
    torch.accelerator.empty_cache()
print("done")
if torch.accelerator.is_available():
    torch.accelerator.empty_cache()
state = torch.get_rng_state()
