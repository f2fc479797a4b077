import os

import torch


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location="cpu")
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location="cpu", weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.cpu())
    moved = torch.load(args.resume, map_location={"cuda:1": "cpu"})
    scripted = torch.jit.load("model.pt", map_location="cpu")
    return checkpoint["epoch"], state, best, ema, moved, scripted
