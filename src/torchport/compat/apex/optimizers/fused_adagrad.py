"""apex.optimizers.fused_adagrad, where apex defines FusedAdagrad (`from apex.optimizers.fused_adagrad import FusedAdagrad`)."""

from torchport.compat.apex.optimizers import FusedAdagrad

__all__ = ["FusedAdagrad"]
