"""apex.optimizers.fused_sgd, where apex defines FusedSGD (`from apex.optimizers.fused_sgd import FusedSGD`)."""

from torchport.compat.apex.optimizers import FusedSGD

__all__ = ["FusedSGD"]
