"""apex.normalization on torch.nn.LayerNorm / torch.nn.RMSNorm (see fused_layer_norm.py)."""

from torchport.compat.apex.normalization.fused_layer_norm import (FusedLayerNorm, FusedRMSNorm, MixedFusedLayerNorm,
                                                                   MixedFusedRMSNorm)

__all__ = ["FusedLayerNorm", "FusedRMSNorm", "MixedFusedLayerNorm", "MixedFusedRMSNorm"]
