"""apex.optimizers.fused_mixed_precision_lamb, where apex defines FusedMixedPrecisionLamb (`from apex.optimizers.fused_mixed_precision_lamb import FusedMixedPrecisionLamb`)."""

from torchport.compat.apex.optimizers import FusedMixedPrecisionLamb

__all__ = ["FusedMixedPrecisionLamb"]
