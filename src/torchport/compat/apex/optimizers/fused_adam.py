"""apex.optimizers.fused_adam, where apex defines FusedAdam (`from apex.optimizers.fused_adam import FusedAdam`)."""

from torchport.compat.apex.optimizers import FusedAdam

__all__ = ["FusedAdam"]
