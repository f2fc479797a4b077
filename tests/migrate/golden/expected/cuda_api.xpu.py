import torch

torch.xpu.manual_seed_all(0)
if torch.xpu.is_available():
    torch.xpu.synchronize()
torch.xpu.empty_cache()
n = torch.xpu.device_count()
peak = torch.xpu.max_memory_allocated() / 2**20
name = torch.xpu.get_device_name(0)
props = torch.xpu.get_device_properties(0)
free, total = torch.xpu.mem_get_info()
graphed = torch.xpu.make_graphed_callables(model, (x,))
g = torch.xpu.XPUGraph()
with torch.xpu.graph(g):
    y = model(x)
g.replay()
torch.set_default_device("xpu")
torch.set_default_tensor_type(torch.cuda.HalfTensor)
torch.set_default_device("xpu")
torch.manual_seed(7)
torch.xpu.manual_seed_all(7)
x = 1; torch.xpu.synchronize()
for i in range(2):
    # wait for the device
    torch.xpu.synchronize()
# free memory before evaluating
torch.xpu.empty_cache()
print("done")
torch.xpu.empty_cache()
state = torch.xpu.get_rng_state()
