import os

import torch


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume, map_location="xpu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location=f"xpu:{args.gpu}")
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location="xpu", weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.to(device=torch.device("xpu", args.gpu)))
    moved = torch.load(args.resume, map_location={"cuda:1": "xpu:0"})
    scripted = torch.jit.load("model.pt", map_location="xpu")
    return checkpoint["epoch"], state, best, ema, moved, scripted
