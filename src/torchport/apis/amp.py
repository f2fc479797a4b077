"""Automatic mixed precision: `torch.cuda.amp` and its device-generic twin `torch.amp`.

CUDA's `torch.cuda.amp.autocast(...)` and `GradScaler(...)` are torch.amp's with the device type
"cuda" bound; torch.amp's take the device type first (`torch.amp.autocast("npu", ...)`), and its
`custom_fwd`/`custom_bwd` as `device_type=`. A target's verdict for each is derived in
`Target.verdict` from these names; the rewriter moves the arguments, the patcher binds the device.
"""

from __future__ import annotations

import re

CUDA_AMP = "torch.cuda.amp"
AMP_PREFIX = CUDA_AMP + "."
TORCH_AMP = "torch.amp"

AUTOCAST = "autocast"
GRAD_SCALER = "GradScaler"
CUSTOM_FWD = "custom_fwd"
CUSTOM_BWD = "custom_bwd"
DEVICE_FIRST = (AUTOCAST, GRAD_SCALER)  # torch.amp's take the device type as their first argument
DEVICE_KEYWORD = (CUSTOM_FWD, CUSTOM_BWD)  # ... as `device_type=`
TAKES_DEVICE_TYPE = DEVICE_FIRST + DEVICE_KEYWORD  # the torch.cuda.amp names torch.amp has, given a device type

# Every name autocast's class goes by: its device type is the first argument.
AUTOCASTS = ("torch.autocast", f"{TORCH_AMP}.{AUTOCAST}", f"{TORCH_AMP}.autocast_mode.{AUTOCAST}")
# The autocast state queries, whose first argument is a device type (`torch.is_autocast_enabled("cuda")`).
STATE_QUERIES = ("is_autocast_enabled", "get_autocast_dtype")
# The AMP calls that take the device type as their first argument, as a library writes them.
DEVICE_TYPE_FIRST_CALLS = frozenset(
    {AUTOCASTS[0], *(f"{TORCH_AMP}.{name}" for name in DEVICE_FIRST), *(f"torch.{name}" for name in STATE_QUERIES)}
)

# Other libraries' autocast helpers that take the device type by a keyword whose default is
# "cuda": called without it they autocast on CUDA alone, and elsewhere run float32 without a
# word (torch disables a "cuda" autocast where there is no CUDA). Qualified name -> that keyword.
# (ultralytics' `autocast(enabled, device="cuda")`, which YOLOv5 re-exports as smart_amp_autocast.)
LIBRARY_AUTOCASTS = {"ultralytics.utils.torch_utils.autocast": "device"}

# What shows a file has mixed precision of its own, so that `--amp` never adds a second: autocast,
# a loss scaler, half precision, apex, and the libraries that own the precision of a training step
# (accelerate, DeepSpeed, Lightning, transformers' Trainer), or a flag that asks for one.
OWN_MIXED_PRECISION = re.compile(
    rb"autocast|GradScaler|\.half\(|bfloat16|float16|\bapex\b|\bamp\.|mixed_precision|\bAccelerator\b"
    rb"|\bdeepspeed\b|\blightning\b|\bTrainer\(|\bprecision\s*=|\bfp16\b|\bbf16\b")

# What shards a model with FSDP (FSDP2's `fully_shard`, FSDP1's class): its mixed precision is FSDP's
# own policy, which casts the sharded parameters and reduces the gradients in its dtype; autocast
# and torch.amp's GradScaler around it are not the form FSDP documents (FSDP1 needs its
# ShardedGradScaler), so `--amp` names the policy instead of adding them.
FSDP_SHARDS = re.compile(r"\bfully_shard\b|\bFullyShardedDataParallel\b")
FSDP_PRECISION = ("fully_shard(..., mp_policy=MixedPrecisionPolicy(param_dtype=..., reduce_dtype=torch.float32)) "
                  "or FullyShardedDataParallel(..., mixed_precision=MixedPrecision(...))")

# What clips gradients (torch.nn.utils', by its last name: timm's and the scripts' own helpers are
# named after it): a GradScaler's gradients are unscaled before any of them reads them.
GRADIENT_CLIPS = ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm")
