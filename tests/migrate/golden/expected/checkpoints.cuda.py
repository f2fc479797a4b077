import os

import torch


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume)
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location=None, weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.cuda(args.gpu))
    moved = torch.load(args.resume, map_location={"cuda:1": "cuda:0"})
    scripted = torch.jit.load("model.pt")
    return checkpoint["epoch"], state, best, ema, moved, scripted
