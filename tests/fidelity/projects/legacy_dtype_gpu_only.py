"""The 2017 "Learning PyTorch with Examples" style: a legacy CUDA tensor type held as the dtype,
used as a constructor, in x.type(dtype) and in isinstance, with no CPU path at all.

Unmodified it needs a GPU: python legacy_dtype_gpu_only.py
"""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()

dtype = torch.cuda.FloatTensor  # the GPU: the only place this script runs
N, D_in, H, D_out = 8, 6, 5, 2

x = torch.randn(N, D_in).type(dtype)
y = torch.randn(N, D_out).type(dtype)
labels = torch.cuda.LongTensor([i % D_out for i in range(N)])
w1 = dtype(D_in, H).normal_()
w2 = dtype(H, D_out).normal_()
assert isinstance(x, dtype) and isinstance(labels, torch.cuda.LongTensor)

learning_rate = 1e-3
for step in range(args.steps):
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    loss = (y_pred - y).pow(2).sum()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h = grad_y_pred.mm(w2.t()).clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)
    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2
    print(f"step {step} loss {loss.item():.4f}")

print(f"FINAL loss {loss.item():.4f} labels {labels.sum().item()}")
