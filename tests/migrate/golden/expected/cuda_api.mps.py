import os
import platform
import types

import torch

torch.manual_seed(0)
if torch.backends.mps.is_available():
    torch.mps.synchronize()
torch.mps.empty_cache()
n = torch.mps.device_count()
peak = 0.0
name = platform.processor()
props = types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0, total_memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), multi_processor_count=os.cpu_count())
graphed = torch.cuda.make_graphed_callables(model, (x,))
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
