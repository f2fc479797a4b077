"""Tiny transformer with best-checkpoint saving and reloading onto the GPU.

Shows a script pinned to one GPU through CUDA_VISIBLE_DEVICES, the
``from torch.cuda import amp`` alias for autocast and GradScaler, tensors moved
with .cuda(args.gpu), and a checkpoint written with torch.save and read back
with torch.load(..., map_location="cuda:0"), as done when resuming on a
different machine than the one that trained the model.
"""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # must be set before torch touches CUDA

import argparse
import tempfile

import torch
import torch.cuda as tc
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda import amp

VOCAB, SEQ_LEN = 16, 12


class TinyTransformer(nn.Module):
    """Predicts the largest token id that occurs in the sequence."""

    def __init__(self, d_model=32, nhead=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = nn.Parameter(torch.zeros(1, SEQ_LEN, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, VOCAB)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens) + self.pos)
        return self.head(h.mean(dim=1))


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=g)
    return x, x.max(dim=1).values


def evaluate(model, x, y, gpu, batch_size=128):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            xb, yb = x[i:i + batch_size].cuda(gpu), y[i:i + batch_size].cuda(gpu)
            with amp.autocast():
                logits = model(xb)
            total += F.cross_entropy(logits.float(), yb, reduction="sum").item()
    return total / len(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0, help="GPU id to use")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tc.manual_seed_all(args.seed)
    print(f"visible GPUs: {tc.device_count()}, training on GPU {args.gpu}")

    train_x, train_y = make_split(args.steps * args.batch_size, seed=args.seed)
    val_x, val_y = make_split(256, seed=args.seed + 1)

    model = TinyTransformer().cuda(args.gpu)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scaler = amp.GradScaler()

    ckpt_dir = tempfile.mkdtemp(prefix="torchport_example_")
    ckpt_path = os.path.join(ckpt_dir, "cuda_best.pt")
    best_loss, best_epoch = float("inf"), -1

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train_x))
        for step in range(args.steps):
            idx = perm[step * args.batch_size:(step + 1) * args.batch_size]
            x, y = train_x[idx].cuda(args.gpu), train_y[idx].cuda(args.gpu)
            optimizer.zero_grad()
            with amp.autocast():
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        val_loss = evaluate(model, val_x, val_y, args.gpu)
        print(f"epoch {epoch}: train loss {loss.item():.4f} val loss {val_loss:.4f}")
        if val_loss < best_loss:
            best_loss, best_epoch = val_loss, epoch
            torch.save({"epoch": epoch,
                        "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(),
                        "val_loss": val_loss}, ckpt_path)
            print(f"saved new best checkpoint cuda_best.pt (epoch {epoch})")

    # Reload the best weights into a fresh model, as a resumed run would.
    checkpoint = torch.load(ckpt_path, map_location="cuda:0")
    restored = TinyTransformer().cuda(args.gpu)
    restored.load_state_dict(checkpoint["model"])
    assert checkpoint["epoch"] == best_epoch
    reloaded_loss = evaluate(restored, val_x, val_y, args.gpu)
    assert abs(reloaded_loss - checkpoint["val_loss"]) < 1e-3, (reloaded_loss, checkpoint["val_loss"])

    os.remove(ckpt_path)
    os.rmdir(ckpt_dir)
    print(f"FINAL example=transformer_checkpoint loss={reloaded_loss:.4f} "
          f"best_epoch={checkpoint['epoch']}")


if __name__ == "__main__":
    main()
