"""A nanoGPT-style trainer written for CUDA with the classic AMP recipe (torch.cuda.amp.autocast
around the forward pass, torch.cuda.amp.GradScaler): the input of bench/fallback.py, which
migrates it to the cpu and accelerator targets and times the outputs' train_step.

    python bench/_amp_gpt.py --steps 20        # on a CUDA machine, as it is
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, BLOCK, EMBED, HEADS, LAYERS = 256, 64, 128, 4, 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(EMBED, 3 * EMBED)
        self.proj = nn.Linear(EMBED, EMBED)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(EMBED, dim=2)
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(EMBED), CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(EMBED)
        self.mlp = nn.Sequential(nn.Linear(EMBED, 4 * EMBED), nn.GELU(), nn.Linear(4 * EMBED, EMBED))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, EMBED), nn.Embedding(BLOCK, EMBED)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln_f, self.lm_head = nn.LayerNorm(EMBED), nn.Linear(EMBED, VOCAB, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.blocks(self.wte(idx) + self.wpe(positions))
        return self.lm_head(self.ln_f(x))


def build(seed=0):
    torch.manual_seed(seed)
    model = GPT().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    return model, optimizer, scaler


def get_batch(generator, batch_size=8):
    data = torch.randint(VOCAB, (batch_size, BLOCK + 1), generator=generator)
    return data[:, :-1].cuda(non_blocking=True), data[:, 1:].cuda(non_blocking=True)


def train_step(model, optimizer, scaler, x, y):
    with torch.cuda.amp.autocast():
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, VOCAB), y.reshape(-1))
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    state, generator = build(), torch.Generator().manual_seed(0)
    for _ in range(args.steps):
        loss = train_step(*state, *get_batch(generator))
    print(f"FINAL amp_gpt loss={loss:.4f}")


if __name__ == "__main__":
    main()
