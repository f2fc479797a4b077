"""NVIDIA apex's public API on native torch, for any device: `amp` on torch.amp, `optimizers` on
torchport.optim, `parallel` on torch DDP and SyncBatchNorm, `normalization` on torch's LayerNorm
and RMSNorm, `fp16_utils` on GradScaler, `multi_tensor_apply` on torch's foreach ops (with `amp_C`'s
kernels in torchport.compat.amp_C), `contrib` where torch has the same computation. What each apex name means natively is apis/apex.py's.

`torchport run` and `import torchport.auto` serve this package as `apex` where no apex is
installed (runtime/patch_apex.py); migrated files the conversion could not rewrite import it:

    from torchport.compat.apex import amp
"""

from torchport.compat.apex import amp, contrib, fp16_utils, multi_tensor_apply, normalization, optimizers, parallel

__all__ = ["amp", "contrib", "fp16_utils", "multi_tensor_apply", "normalization", "optimizers", "parallel"]
