"""A DiT-style denoiser trained for a few steps, written for CUDA with xformers' memory-efficient
attention (a relative-position bias on alternate blocks, a causal bias on the text tokens) and
its SwiGLU (test fixture for `torchport run`; diffusion_sdpa_train.py is the same model written
by hand with SDPA)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import xformers.ops as xops
from xformers.ops import LowerTriangularMask, SwiGLU

torch.manual_seed(0)
TOKENS, DIM, HEADS, BLOCKS = 16, 32, 4, 2


class Attention(nn.Module):
    def __init__(self, biased):
        super().__init__()
        self.qkv, self.out = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.bias = nn.Parameter(torch.zeros(1, HEADS, TOKENS, TOKENS)) if biased else None

    def forward(self, x, causal=False):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, HEADS, DIM // HEADS).unbind(2)
        bias = LowerTriangularMask() if causal else (None if self.bias is None else self.bias.expand(b, -1, -1, -1))
        y = xops.memory_efficient_attention(q, k, v, attn_bias=bias)
        return self.out(y.reshape(b, n, DIM))


class Block(nn.Module):
    def __init__(self, biased):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.attn = Attention(biased)
        self.mlp = SwiGLU(DIM, 2 * DIM, DIM, _pack_weights=True)
        self.modulation = nn.Linear(DIM, 2 * DIM)

    def forward(self, x, t, causal):
        shift, scale = self.modulation(t)[:, None].chunk(2, dim=-1)
        x = x + self.attn(self.norm1(x) * (1 + scale) + shift, causal)
        return x + self.mlp(self.norm2(x))


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.time = nn.Linear(4, DIM), nn.Linear(1, DIM)
        self.blocks = nn.ModuleList(Block(biased=i % 2 == 0) for i in range(BLOCKS))
        self.head = nn.Linear(DIM, 4)

    def forward(self, x, t):
        h, temb = self.embed(x), F.silu(self.time(t[:, None]))
        for i, block in enumerate(self.blocks):
            h = block(h, temb, causal=i == BLOCKS - 1)
        return self.head(h)


device = "cuda"
model = Denoiser().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
generator = torch.Generator().manual_seed(1)
images = torch.randn(8, TOKENS, 4, generator=generator).to(device)
for step in range(6):
    t = torch.rand(8, generator=generator).to(device)
    noise = torch.randn(8, TOKENS, 4, generator=generator).to(device)
    noisy = (1 - t[:, None, None]) * images + t[:, None, None] * noise
    loss = F.mse_loss(model(noisy, t), noise - images)  # rectified-flow velocity
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.8f}")
