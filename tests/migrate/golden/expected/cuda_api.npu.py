import torch
import torch_npu

torch.npu.manual_seed_all(0)
if torch.npu.is_available():
    torch.npu.synchronize()
torch.npu.empty_cache()
n = torch.npu.device_count()
peak = torch.npu.max_memory_allocated() / 2**20
name = torch.npu.get_device_name(0)
props = torch.npu.get_device_properties(0)
free, total = torch.npu.mem_get_info()
graphed = torch.npu.make_graphed_callables(model, (x,))
g = torch.npu.NPUGraph()
with torch.npu.graph(g):
    y = model(x)
g.replay()
torch.set_default_tensor_type("torch.npu.FloatTensor")
torch.set_default_tensor_type(torch.npu.HalfTensor)
torch.set_default_tensor_type(torch.npu.FloatTensor)
torch.manual_seed(7)
torch.npu.manual_seed_all(7)
x = 1; torch.npu.synchronize()
for i in range(2):
    # wait for the device
    torch.npu.synchronize()
# free memory before evaluating
torch.npu.empty_cache()
print("done")
torch.npu.empty_cache()
state = torch.npu.get_rng_state()
