import torch

device = 'cpu'
device_type = 'cpu'
use_fused = device_type == 'cuda'
pin = "cuda" != device_type
on_gpu = 'cuda' in str(device) and use_fused
off_gpu = not "cuda" not in device
args = {'cuda': torch.cpu.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device("cuda"):
        return "gpu"
    return x.device != torch.device('cuda')
