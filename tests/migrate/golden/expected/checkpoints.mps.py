import os

import torch


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume, map_location="mps")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location="mps")
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location="mps", weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device="mps"))
    moved = torch.load(args.resume, map_location={"cuda:1": "mps"})
    scripted = torch.jit.load("model.pt", map_location="mps")
    return checkpoint["epoch"], state, best, ema, moved, scripted
