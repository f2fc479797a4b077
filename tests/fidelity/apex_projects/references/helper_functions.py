"""helper_functions written by hand for the CPU with torch.amp: two scaled backwards before one
step while warming up, then backward, unscale, clip, step; the model's forward under autocast in
bfloat16 where the CPU computes it natively, the losses in float32 on its outputs (apex's O1 runs
softmax and the losses in float32; CPU autocast would leave softmax in bfloat16)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)


def entropy_loss(logits):
    p = F.softmax(logits, dim=1)
    return -(p * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--warmup-steps', type=int, default=4)
    parser.add_argument('--steps', type=int, default=8)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--learning-rate', type=float, default=0.3)
    parser.add_argument('--lambda-ent', type=float, default=0.5)
    parser.add_argument('--clip-grad', type=float, default=0.5)
    args = parser.parse_args()

    torch.manual_seed(0)
    source = torch.randn(args.steps, args.batch_size, 16) * 3
    labels = source[..., :4].argmax(dim=-1)
    target_domain = torch.randn(args.steps, args.batch_size, 16) * 3 + 0.5

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu")

    def forward(inputs):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):
            return model(inputs).float()

    for i_iter in range(args.steps):
        x, y, t = source[i_iter], labels[i_iter], target_domain[i_iter]
        optimizer.zero_grad()
        if i_iter < args.warmup_steps:
            loss = F.cross_entropy(forward(x), y)
            scaler.scale(loss).backward()
            loss_ent = args.lambda_ent * entropy_loss(forward(t))
            scaler.scale(loss_ent).backward()
        else:
            loss = F.cross_entropy(forward(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        scaler.step(optimizer)
        scaler.update()
        print(f'iter {i_iter} loss {loss.item():.6f}')

    print(f'FINAL reference=helper_functions autocast={CPU_BF16} steps={args.steps} loss={loss.item():.6f}')


if __name__ == '__main__':
    main()
