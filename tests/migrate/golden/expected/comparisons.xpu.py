import torch

device = 'xpu' if torch.xpu.is_available() else 'cpu'
device_type = 'xpu' if 'xpu' in device else 'cpu'
use_fused = device_type == 'xpu'
pin = "xpu" != device_type
on_gpu = 'xpu' in str(device) and use_fused
off_gpu = not "xpu" not in device
args = {'cuda': torch.xpu.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)
if first.is_xpu:
    first = first.pin_memory()


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device("xpu"):
        return "gpu"
    return x.device != torch.device('xpu')
