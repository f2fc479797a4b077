"""apex.optimizers.fused_lamb, where apex defines FusedLAMB (`from apex.optimizers.fused_lamb import FusedLAMB`)."""

from torchport.compat.apex.optimizers import FusedLAMB

__all__ = ["FusedLAMB"]
