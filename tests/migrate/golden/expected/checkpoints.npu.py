import os

import torch
import torch_npu


def resume(model, optimizer, args):
    checkpoint = torch.load(args.resume, map_location="npu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if args.gpu is not None:
        state = torch.load(args.resume, map_location=f"npu:{args.gpu}")
    best = torch.load(os.path.join(args.out, "model_best.pth"), map_location="npu", weights_only=True)
    ema = torch.load(args.ema, map_location=lambda storage, loc: storage.npu(args.gpu))
    moved = torch.load(args.resume, map_location={"cuda:1": "npu:0"})
    scripted = torch.jit.load("model.pt", map_location="npu")
    return checkpoint["epoch"], state, best, ema, moved, scripted
