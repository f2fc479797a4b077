import torch
import torch_npu

device = 'npu' if torch.npu.is_available() else 'cpu'
device_type = 'npu' if 'npu' in device else 'cpu'
use_fused = device_type == 'npu'
pin = "npu" != device_type
on_gpu = 'npu' in str(device) and use_fused
off_gpu = not "npu" not in device
args = {'cuda': torch.npu.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)
if first.is_npu:
    first = first.pin_memory()


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device("npu"):
        return "gpu"
    return x.device != torch.device('npu')
