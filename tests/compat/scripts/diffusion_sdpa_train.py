"""diffusion_xformers_train.py written by hand in plain torch: SDPA with the bias as attn_mask and
is_causal for the causal block, SwiGLU written out (the reference its run is compared to)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden, out, _pack_weights=True):
        super().__init__()
        self.w12, self.w3 = nn.Linear(dim, 2 * hidden), nn.Linear(hidden, out)

    def forward(self, x):
        gate, up = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(gate) * up)

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
        bias = None if causal or self.bias is None else self.bias.expand(b, -1, -1, -1)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=bias,
                                           is_causal=causal)
        return self.out(y.transpose(1, 2).reshape(b, n, DIM))


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


device = "cpu"
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
