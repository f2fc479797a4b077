"""The training step bench/runtime.py times, in the bundled examples' CUDA style (`.cuda()`,
`.to("cuda")`, torch.cuda.amp.autocast and GradScaler, torch.cuda.synchronize). The bench runs it
as it is under `torchport run --target cpu`, and migrated with `--target cpu` as the native side."""

import torch
import torch.nn.functional as F


def setup(make_model):
    torch.manual_seed(0)
    model = make_model().cuda()
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), torch.cuda.amp.GradScaler()


def step(model, optimizer, scaler, x, y):
    x = x.to("cuda", non_blocking=True)
    y = y.to("cuda", non_blocking=True)
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast():
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.cuda.synchronize()
    return loss.item()
