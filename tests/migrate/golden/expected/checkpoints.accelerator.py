import os

import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def accelerator_device(device=None):
    """What cuda(device) meant, on DEVICE_TYPE: device is an index, None, a device or its name."""
    index = device if device is None or isinstance(device, int) else torch.device(device).index
    return torch.device(DEVICE_TYPE, index)


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume, map_location=DEVICE_TYPE)
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location=DEVICE_TYPE)
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location=DEVICE_TYPE, weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device=accelerator_device(args.gpu)))
    moved = torch.load(args.resume, map_location={"cuda:1": DEVICE_TYPE})
    scripted = torch.jit.load("model.pt", map_location=DEVICE_TYPE)
    return checkpoint["epoch"], state, best, ema, moved, scripted
