"""llm_flash_bnb_train.py written by hand in plain torch: SDPA with an explicit GQA expansion,
rotate-half rotary, torch.nn.RMSNorm, torch.optim.AdamW (the reference its run is compared to)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def RMSNorm(dim):
    return nn.RMSNorm(dim, eps=1e-5)


def apply_rotary_emb(x, cos, sin):
    half = cos.shape[-1]
    cos, sin = cos[:, None], sin[:, None]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

torch.manual_seed(0)
VOCAB, DIM, HEADS, KV_HEADS, LAYERS, SEQ = 64, 32, 4, 2, 2, 16
HEAD = DIM // HEADS


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, (HEADS + 2 * KV_HEADS) * HEAD, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split([HEADS * HEAD, KV_HEADS * HEAD, KV_HEADS * HEAD], dim=-1)
        q, k, v = q.view(b, t, HEADS, HEAD), k.view(b, t, KV_HEADS, HEAD), v.view(b, t, KV_HEADS, HEAD)
        q, k = apply_rotary_emb(q, cos, sin), apply_rotary_emb(k, cos, sin)
        k, v = (z.repeat_interleave(HEADS // KV_HEADS, dim=2) for z in (k, v))
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, DIM))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(DIM), RMSNorm(DIM)
        self.attn = Attention()
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm1(x), cos, sin)
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        angles = torch.outer(torch.arange(SEQ).float(), 1.0 / 10000 ** (torch.arange(0, HEAD, 2).float() / HEAD))
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, idx, targets):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.reshape(-1))


device = "cpu"
model = GPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
data = torch.randint(0, VOCAB, (8, SEQ + 1), generator=torch.Generator().manual_seed(1)).to(device)
for step in range(6):
    loss = model(data[:, :-1], data[:, 1:])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.8f}")
