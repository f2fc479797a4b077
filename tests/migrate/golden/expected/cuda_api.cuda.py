import torch

torch.cuda.manual_seed_all(0)
if torch.cuda.is_available():
    torch.cuda.synchronize()
torch.cuda.empty_cache()
n = torch.cuda.device_count()
peak = torch.cuda.max_memory_allocated() / 2**20
name = torch.cuda.get_device_name(0)
props = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info()
graphed = torch.cuda.make_graphed_callables(model, (x,))
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = model(x)
g.replay()
torch.set_default_tensor_type("torch.cuda.FloatTensor")
torch.set_default_tensor_type(torch.cuda.HalfTensor)
torch.set_default_tensor_type(torch.cuda.FloatTensor)
torch.manual_seed(7)
torch.cuda.manual_seed_all(7)
x = 1; torch.cuda.synchronize()
for i in range(2):
    # wait for the device
    torch.cuda.synchronize()
# free memory before evaluating
torch.cuda.empty_cache()
print("done")
torch.cuda.memory.empty_cache()
state = torch.cuda.random.get_rng_state()
