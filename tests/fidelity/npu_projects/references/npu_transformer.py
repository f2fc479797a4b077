"""npu_transformer written by hand for CPU processes: the same model, data, seed and steps in plain
torch. F.rms_norm and F.scaled_dot_product_attention where the project calls torch_npu's fused
kernels, torch.optim.SGD (what NpuFusedSGD computes), gloo, DDP without device ids, and with --amp
torch.amp: autocast in bfloat16 exactly where the CPU computes it natively (the cpu target's rule),
a GradScaler. Under `torchrun --nproc_per_node 2` it keeps the global batch, as the project."""
import gc
import argparse
import json
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from torchport.targets.cpu import NATIVE_BF16_FLAGS

CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in NATIVE_BF16_FLAGS)
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", default=2, type=int)
parser.add_argument("--batch-size", default=16, type=int)
parser.add_argument("--lr", default=0.05, type=float)
parser.add_argument("--momentum", default=0.9, type=float)
parser.add_argument("--weight-decay", default=1e-4, type=float)
parser.add_argument("--seed", default=1234, type=int)
parser.add_argument("--amp", default=False, action="store_true")


class SyntheticTokens(Dataset):
    def __init__(self, size=256, seq_len=16, vocab=16, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.tokens = torch.randint(0, vocab, (size, seq_len), generator=generator)
        counts = torch.stack([(self.tokens // 4 == c).sum(dim=1) for c in range(vocab // 4)], dim=1)
        self.labels = counts.argmax(dim=1)

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, index):
        return self.tokens[index], self.labels[index]


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.rms_norm(x, self.weight.shape, self.weight, self.eps)


class SelfAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, seq_len, dim = x.shape
        qkv = self.qkv(x).view(batch, seq_len, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], scale=self.scale)
        return self.proj(out.transpose(1, 2).reshape(batch, seq_len, dim))


class Block(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = SelfAttention(dim, num_heads)
        self.norm2 = RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TransformerClassifier(nn.Module):
    def __init__(self, vocab=16, seq_len=16, dim=32, num_heads=4, depth=2, num_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq_len, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, num_heads) for _ in range(depth)])
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))


def dump_weights(model):
    if WEIGHTS_OUT:
        weights = {name.removeprefix("module."): value.tolist() for name, value in model.state_dict().items()}
        with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
            json.dump(weights, out)


def main():
    args = parser.parse_args()
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    distributed = world_size > 1
    if distributed:
        dist.init_process_group(backend="gloo")

    torch.manual_seed(args.seed)
    model = TransformerClassifier()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler("cpu") if args.amp else None
    if distributed:
        model = DDP(model, broadcast_buffers=False)

    dataset = SyntheticTokens()
    sampler = DistributedSampler(dataset, shuffle=False) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size // world_size, shuffle=False, sampler=sampler,
                        drop_last=True)

    for epoch in range(args.epochs):
        if distributed:
            sampler.set_epoch(epoch)
        model.train()
        correct = torch.zeros(1)
        for i, (tokens, labels) in enumerate(loader):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.amp and CPU_BF16):
                logits = model(tokens)
                loss = criterion(logits, labels)
            optimizer.zero_grad()
            if args.amp:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            reduced_loss = loss.detach().clone()
            if distributed:
                dist.all_reduce(reduced_loss)
                reduced_loss /= world_size
            correct += (logits.argmax(dim=1) == labels).sum()
            if rank == 0:
                print(f"Epoch: [{epoch}][{i}/{len(loader)}] Loss {reduced_loss.item():.8f}")
        if distributed:
            dist.all_reduce(correct)
        if rank == 0:
            print(f" * Epoch {epoch} train accuracy {100.0 * correct.item() / len(dataset):.2f}")

    dump_weights(model)
    if rank == 0:
        print(f"FINAL reference=npu_transformer autocast={args.amp and CPU_BF16} world_size={world_size} "
              f"loss={reduced_loss.item():.8f}", flush=True)
    del model  # (DDP freed before its group goes: gloo may abort at exit otherwise)
    gc.collect()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
