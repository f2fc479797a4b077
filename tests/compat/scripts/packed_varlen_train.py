"""A packed-sequence fine-tuning loop written for CUDA with flash-attn's varlen attention: documents
of different lengths packed into one row, `cu_seqlens` marking where each starts, causal attention
inside each document only (test fixture; packed_sdpa_train.py is the same model written by hand
with SDPA per document)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from flash_attn import flash_attn_varlen_func

torch.manual_seed(0)
VOCAB, DIM, HEADS = 48, 32, 4
HEAD = DIM // HEADS
LENGTHS = [5, 11, 3, 9]


class PackedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x, cu_seqlens, max_seqlen):
        total = x.shape[0]
        q, k, v = self.qkv(x).view(total, 3, HEADS, HEAD).unbind(dim=1)
        y = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                                   dropout_p=0.0, causal=True)
        return self.proj(y.reshape(total, DIM))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn = PackedAttention()
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens, cu_seqlens, max_seqlen):
        x = self.embed(tokens)
        x = x + self.attn(self.norm(x), cu_seqlens, max_seqlen)
        return self.head(x)


model = Model().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
tokens = torch.randint(0, VOCAB, (sum(LENGTHS),), generator=torch.Generator().manual_seed(2)).cuda()
targets = torch.roll(tokens, -1)
cu_seqlens = torch.tensor([0, *torch.tensor(LENGTHS).cumsum(0).tolist()], dtype=torch.int32).cuda()
for step in range(6):
    logits = model(tokens, cu_seqlens, max(LENGTHS))
    loss = F.cross_entropy(logits, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.8f}")
