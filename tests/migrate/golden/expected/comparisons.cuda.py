import torch

device = 'cuda' if torch.cuda.is_available() else 'cpu'
device_type = 'cuda' if 'cuda' in device else 'cpu'
use_fused = device_type == 'cuda'
pin = "cuda" != device_type
on_gpu = 'cuda' in str(device) and use_fused
off_gpu = not "cuda" not in device
args = {'cuda': torch.cuda.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)
if first.is_cuda:
    first = first.pin_memory()


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device("cuda"):
        return "gpu"
    return x.device != torch.device('cuda')
