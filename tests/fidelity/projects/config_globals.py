"""nanoGPT-style trainer: module-level config globals, overridden from argv as --key=value.

Unmodified on a CPU-only machine: python config_globals.py --device=cpu --dtype=float32
"""
import inspect
import math
import sys
from ast import literal_eval
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.nn import functional as F

# -----------------------------------------------------------------------------
# default config values
batch_size = 4
block_size = 8
vocab_size = 32
n_embd = 16
max_iters = 3
learning_rate = 1e-3
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
seed = 1337
device = 'cuda'  # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
# -----------------------------------------------------------------------------
config_keys = [k for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
# poor man's configurator (configurator.py): --key=value overrides a global above
for arg in sys.argv[1:]:
    assert arg.startswith('--'), f"expected --key=value, got {arg}"
    key, val = arg[2:].split('=', 1)
    if key not in globals():
        raise ValueError(f"Unknown config key: {key}")
    try:
        attempt = literal_eval(val)
    except (SyntaxError, ValueError):
        attempt = val
    assert type(attempt) == type(globals()[key]), f"type mismatch for {key}"
    print(f"Overriding: {key} = {attempt}")
    globals()[key] = attempt
config = {k: globals()[k] for k in config_keys}
# -----------------------------------------------------------------------------

args = {'cuda': torch.cuda.is_available(), 'seed': seed, 'log_interval': 1}
torch.manual_seed(args['seed'])
if args['cuda']:
    torch.cuda.manual_seed(args['seed'])
torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn
device_type = 'cuda' if 'cuda' in device else 'cpu'  # for later use in torch.autocast
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

generator = torch.Generator().manual_seed(seed)
train_data = torch.randint(vocab_size, (256,), generator=generator, dtype=torch.int64)


def get_batch(split):
    data = train_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    if device_type == 'cuda':
        # pin arrays x,y, which allows us to move them to GPU asynchronously (non_blocking=True)
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.ln_f(self.wte(idx) + self.wpe(pos))
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0},
        ]
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, fused=use_fused)
        print(f"using fused AdamW: {use_fused}")
        return optimizer


model = TinyLM()
model.to(device)
# initialize a GradScaler. If enabled=False scaler is a no-op
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)

X, Y = get_batch('train')  # fetch the very first batch
for iter_num in range(max_iters):
    with ctx:
        logits, loss = model(X, Y)
    X, Y = get_batch('train')  # immediately async prefetch next batch while model is doing the forward pass on the GPU
    scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % args['log_interval'] == 0:
        print(f"iter {iter_num}: loss {loss.item():.4f}")

lossf = loss.item()
assert math.isfinite(lossf), lossf
print(f"FINAL project=config_globals device={device} dtype={dtype} iters={max_iters} loss={lossf:.4f}")
