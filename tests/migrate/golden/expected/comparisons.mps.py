import torch

device = 'mps' if torch.backends.mps.is_available() else 'cpu'
device_type = 'mps' if 'mps' in device else 'cpu'
use_fused = device_type == 'mps'
pin = "mps" != device_type
on_gpu = 'mps' in str(device) and use_fused
off_gpu = not "mps" not in device
args = {'cuda': torch.backends.mps.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)
if first.is_mps:
    first = first.pin_memory()


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device("mps"):
        return "gpu"
    return x.device != torch.device('mps')
