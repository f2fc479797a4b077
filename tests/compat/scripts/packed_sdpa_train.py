"""packed_varlen_train.py's model written by hand on the CPU: causal SDPA over each packed
document in turn (the reference its losses are checked against)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, HEADS = 48, 32, 4
HEAD = DIM // HEADS
LENGTHS = [5, 11, 3, 9]


class PackedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x, lengths):
        total = x.shape[0]
        q, k, v = self.qkv(x).view(total, 3, HEADS, HEAD).unbind(dim=1)
        pieces, start = [], 0
        for length in lengths:
            part = [t[start:start + length].transpose(0, 1) for t in (q, k, v)]  # (H, L, D)
            pieces.append(F.scaled_dot_product_attention(*part, is_causal=True).transpose(0, 1))
            start += length
        return self.proj(torch.cat(pieces).reshape(total, DIM))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn = PackedAttention()
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens, lengths):
        x = self.embed(tokens)
        x = x + self.attn(self.norm(x), lengths)
        return self.head(x)


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
tokens = torch.randint(0, VOCAB, (sum(LENGTHS),), generator=torch.Generator().manual_seed(2))
targets = torch.roll(tokens, -1)
for step in range(6):
    logits = model(tokens, LENGTHS)
    loss = F.cross_entropy(logits, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.8f}")
