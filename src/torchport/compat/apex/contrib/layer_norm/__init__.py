from torchport.compat.apex.contrib.layer_norm.layer_norm import FastLayerNorm

__all__ = ["FastLayerNorm"]
