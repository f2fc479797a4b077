import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

device = DEVICE_TYPE
device_type = DEVICE_TYPE if DEVICE_TYPE != 'cpu' and DEVICE_TYPE in device else 'cpu'
use_fused = device_type == DEVICE_TYPE != 'cpu'
pin = device_type != DEVICE_TYPE or DEVICE_TYPE == "cpu"
on_gpu = (DEVICE_TYPE != 'cpu' and DEVICE_TYPE in str(device)) and use_fused
off_gpu = not (DEVICE_TYPE == "cpu" or DEVICE_TYPE not in device)
args = {'cuda': torch.accelerator.is_available(), 'device': device}
if args['cuda'] and args.get('cuda') and getattr(args, 'cuda', False):
    pass
first = torch.zeros(2).to(device)
if first.device.type == DEVICE_TYPE != "cpu":
    first = (first.pin_memory() if torch.accelerator.is_available() else first)


def device_objects(x):
    # a device object compared with a CUDA one asks the same question
    if x.device == torch.device(DEVICE_TYPE) != torch.device("cpu"):
        return "gpu"
    return x.device != torch.device(DEVICE_TYPE) or torch.device(DEVICE_TYPE) == torch.device('cpu')
