"""A small transformer classifier trained the way Ascend ModelZoo's train scripts are written for
the NPU: `import torch_npu`, the NPU set per process from LOCAL_RANK (`torch.npu.set_device`,
`loc = f"npu:{local_rank}"`), static-shape compilation switched off, the model moved with `.to(loc)`
and its Linear weights cast to the ND format, `torch_npu.optim.NpuFusedSGD`, mixed precision through
`torch.npu.amp` (autocast and a GradScaler), hccl under torchrun with a DistributedSampler and DDP
(the global batch divided among the NPUs), fused kernels in the model (`npu_rms_norm`,
`npu_fusion_attention` in BNSD layout), the loss and an accuracy count (on `torch.device("npu",
local_rank)`) reduced over the ranks, `torch.npu.synchronize()` before each step is timed.

Run on Ascend: python npu_transformer.py --amp (one NPU), or
    torchrun --nproc_per_node 2 npu_transformer.py --amp (hccl)
It needs torch_npu (CANN and an Ascend NPU) as it is.

Unlike a ModelZoo model: a synthetic token set of a few hundred sequences, two small blocks.

Test hook, off unless set (nothing else changes): PROJECT_WEIGHTS names a file, ".<pid>" appended
(one per process), for the final weights (JSON).
"""
import gc
import argparse
import json
import math
import os
import time

import torch
import torch_npu
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")
ACL_FORMAT_ND = 2

parser = argparse.ArgumentParser(description="Transformer classifier training on Ascend NPU")
parser.add_argument("--epochs", default=2, type=int)
parser.add_argument("--batch-size", default=16, type=int, help="global batch size, shared by the NPUs")
parser.add_argument("--lr", default=0.05, type=float)
parser.add_argument("--momentum", default=0.9, type=float)
parser.add_argument("--weight-decay", default=1e-4, type=float)
parser.add_argument("--seed", default=1234, type=int)
parser.add_argument("--amp", default=False, action="store_true", help="use torch.npu.amp mixed precision")
parser.add_argument("--local_rank", default=int(os.environ.get("LOCAL_RANK", 0)), type=int)


class SyntheticTokens(Dataset):
    """Sequences of tokens; the label is the class (token // 4) that occurs most often."""

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
        return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]


class FlashSelfAttention(nn.Module):
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
        q, k, v = qkv[0], qkv[1], qkv[2]  # BNSD
        out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BNSD", scale=self.scale, keep_prob=1.0)[0]
        return self.proj(out.transpose(1, 2).reshape(batch, seq_len, dim))


class Block(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = FlashSelfAttention(dim, num_heads)
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


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def dump_weights(model):
    if WEIGHTS_OUT:
        weights = {name.removeprefix("module."): value.cpu().tolist() for name, value in model.state_dict().items()}
        with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
            json.dump(weights, out)


def main():
    args = parser.parse_args()
    local_rank = args.local_rank
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    distributed = world_size > 1

    torch.npu.set_device(local_rank)
    torch.npu.set_compile_mode(jit_compile=False)
    loc = f"npu:{local_rank}"
    device = torch.device("npu", local_rank)
    if distributed:
        dist.init_process_group(backend="hccl", world_size=world_size, rank=rank)

    torch.manual_seed(args.seed)
    torch.npu.manual_seed(args.seed)
    model = TransformerClassifier().to(loc)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.weight.data = torch_npu.npu_format_cast(module.weight.data, ACL_FORMAT_ND)
    criterion = nn.CrossEntropyLoss().npu()
    optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                            weight_decay=args.weight_decay)
    scaler = torch.npu.amp.GradScaler() if args.amp else None
    if distributed:
        model = DDP(model, device_ids=[local_rank], broadcast_buffers=False)

    batch_size = args.batch_size // world_size
    train_dataset = SyntheticTokens()
    train_sampler = DistributedSampler(train_dataset, shuffle=False) if distributed else None
    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=False, sampler=train_sampler,
                              num_workers=0, pin_memory=True, drop_last=True)

    for epoch in range(args.epochs):
        if distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        correct = torch.zeros(1, device=device)
        for i, (tokens, labels) in enumerate(train_loader):
            start = time.time()
            tokens = tokens.to(loc, non_blocking=True)
            labels = labels.npu(non_blocking=True)
            with torch.npu.amp.autocast(enabled=args.amp):
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
            reduced_loss = reduce_tensor(loss.detach(), world_size) if distributed else loss.detach()
            correct += (logits.argmax(dim=1) == labels).sum()
            torch.npu.synchronize()
            if rank == 0:
                print(f"Epoch: [{epoch}][{i}/{len(train_loader)}] Loss {reduced_loss.item():.8f} "
                      f"Time {time.time() - start:.3f}")
        if distributed:
            dist.all_reduce(correct)
        if rank == 0:
            print(f" * Epoch {epoch} train accuracy {100.0 * correct.item() / len(train_dataset):.2f}")

    dump_weights(model)
    if rank == 0:
        print(f"FINAL project=npu_transformer world_size={world_size} loss={reduced_loss.item():.8f}", flush=True)
    del model  # (DDP freed before its group goes: gloo may abort at exit otherwise)
    gc.collect()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
