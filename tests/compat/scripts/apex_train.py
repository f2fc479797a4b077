"""A CUDA training script written for apex, in the common public styles (optional apex behind a
has_apex flag, O2 with clipping through amp.master_params, amp state in the checkpoint)."""

import sys

import torch

try:
    from apex import amp
    from apex.optimizers import FusedAdam
    from apex.parallel import convert_syncbn_model
    has_apex = True
except ImportError:
    has_apex = False

assert has_apex, "apex is not importable"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
model = convert_syncbn_model(model).cuda()
optimizer = FusedAdam(model.parameters(), lr=1e-2)
model, optimizer = amp.initialize(model, optimizer, opt_level="O2", keep_batchnorm_fp32=True, loss_scale="dynamic")
x, y = torch.randn(32, 8).cuda(), torch.randint(0, 2, (32,)).cuda()
for step in range(5):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
    optimizer.step()
checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": amp.state_dict()}
amp.load_state_dict(checkpoint["amp"])
print(f"loss {loss.item():.6f} scale {checkpoint['amp']['loss_scaler0']['loss_scale']}", file=sys.stdout)
